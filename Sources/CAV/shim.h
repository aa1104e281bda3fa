#include <errno.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/channel_layout.h>
#include <libavutil/opt.h>

/* Error codes that are macros. */
static inline int sb_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int sb_averror_eof(void) { return AVERROR_EOF; }
