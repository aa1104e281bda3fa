#include <vpx/vpx_decoder.h>
#include <vpx/vpx_encoder.h>
#include <vpx/vp8dx.h>
#include <vpx/vp8cx.h>

/* The init calls are macros (they pass the ABI version) and vpx_codec_control is variadic: one wrapper each. */
static inline vpx_codec_err_t sb_vpx_vp8_decoder_init(vpx_codec_ctx_t *ctx) {
    return vpx_codec_dec_init(ctx, vpx_codec_vp8_dx(), NULL, 0);
}
static inline vpx_codec_err_t sb_vpx_vp8_config_default(vpx_codec_enc_cfg_t *cfg) {
    return vpx_codec_enc_config_default(vpx_codec_vp8_cx(), cfg, 0);
}
static inline vpx_codec_err_t sb_vpx_vp8_encoder_init(vpx_codec_ctx_t *ctx, const vpx_codec_enc_cfg_t *cfg) {
    return vpx_codec_enc_init(ctx, vpx_codec_vp8_cx(), cfg, 0);
}
static inline vpx_codec_err_t sb_vpx_set_cpu_used(vpx_codec_ctx_t *ctx, int speed) {
    return vpx_codec_control(ctx, VP8E_SET_CPUUSED, speed);
}
/* The next compressed frame the encoder has ready, skipping other packet kinds; 0 when there is none. */
static inline int sb_vpx_next_frame(vpx_codec_ctx_t *ctx, vpx_codec_iter_t *iter, const void **buf, size_t *size, int *key) {
    const vpx_codec_cx_pkt_t *pkt;
    while ((pkt = vpx_codec_get_cx_data(ctx, iter)) != NULL) {
        if (pkt->kind == VPX_CODEC_CX_FRAME_PKT) {
            *buf = pkt->data.frame.buf;
            *size = pkt->data.frame.sz;
            *key = (pkt->data.frame.flags & VPX_FRAME_IS_KEY) != 0;
            return 1;
        }
    }
    return 0;
}
