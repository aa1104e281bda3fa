#include <opus/opusfile.h>

/* Opens a file to be read once from its start: the callbacks cannot seek, so libopusfile decodes each
   link as it comes instead of scanning the whole file for its links at open (0.12 leaks a link's tags
   when that scan fails, fixed upstream after the release). NULL with OP_EFAULT when the file cannot be
   opened (errno says why). */
static inline OggOpusFile *sb_op_open_stream(const char *path, int *error) {
    OpusFileCallbacks callbacks;
    void *stream = op_fopen(&callbacks, path, "rb");
    if (stream == NULL) { *error = OP_EFAULT; return NULL; }
    callbacks.seek = NULL;
    callbacks.tell = NULL;
    OggOpusFile *file = op_open_callbacks(stream, &callbacks, NULL, 0, error);
    if (file == NULL) callbacks.close(stream);
    return file;
}
