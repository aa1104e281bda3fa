#include <opus/opusenc.h>

/* opusenc ctl requests are variadic macros. */
static inline int sb_ope_set_bitrate(OggOpusEnc *enc, opus_int32 bitrate) { return ope_encoder_ctl(enc, OPUS_SET_BITRATE(bitrate)); }
