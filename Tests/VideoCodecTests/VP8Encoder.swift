import CVPX
import VideoCodec

/// A VP8 encoder (libvpx) in real-time mode, for the tests to make what `VP8Decoder` reads: pictures of one
/// size in, compressed frames out, a key frame at least every `keyframeInterval` frames.
final class VP8Encoder {
    let width: Int
    let height: Int
    private var context = vpx_codec_ctx_t()
    private var image = vpx_image_t()
    private var ready = false

    enum Failure: Error, Equatable {
        case initialisation(String)
    }

    struct Frame: Sendable, Equatable {
        var bytes: [UInt8]
        var keyframe: Bool
    }

    /// `bitrate` in kb/s; `frameRate` frames a second (the time base of `encode`'s `pts`).
    init(width: Int, height: Int, frameRate: Int, bitrate: Int, keyframeInterval: Int) throws(Failure) {
        precondition(width > 0 && height > 0 && width % 2 == 0 && height % 2 == 0 && frameRate > 0)
        self.width = width
        self.height = height
        var config = vpx_codec_enc_cfg_t()
        var status = sb_vpx_vp8_config_default(&config)
        guard status == VPX_CODEC_OK else { throw .initialisation(String(cString: vpx_codec_err_to_string(status))) }
        config.g_w = UInt32(width)
        config.g_h = UInt32(height)
        config.g_timebase = vpx_rational(num: 1, den: Int32(frameRate))
        config.rc_target_bitrate = UInt32(bitrate)
        config.rc_end_usage = VPX_CBR
        config.g_lag_in_frames = 0
        config.g_error_resilient = 0
        config.g_threads = 1
        config.kf_mode = VPX_KF_AUTO
        config.kf_max_dist = UInt32(max(1, keyframeInterval))
        status = sb_vpx_vp8_encoder_init(&context, &config)
        guard status == VPX_CODEC_OK else { throw .initialisation(String(cString: vpx_codec_err_to_string(status))) }
        ready = true
        _ = sb_vpx_set_cpu_used(&context, 8)
    }

    deinit {
        if ready { vpx_codec_destroy(&context) }
    }

    /// The frames one picture (of the encoder's size) codes to, at `pts` in frames.
    func encode(_ picture: I420Image, pts: Int64) -> [Frame] {
        precondition(picture.width == width && picture.height == height, "a picture of the encoder's size")
        var frames: [Frame] = []
        // libvpx reads the planes and never writes them: no copy of the picture is made for it.
        picture.y.withUnsafeBufferPointer { y in
            picture.u.withUnsafeBufferPointer { u in
                picture.v.withUnsafeBufferPointer { v in
                    image.fmt = VPX_IMG_FMT_I420
                    image.w = UInt32(width)
                    image.h = UInt32(height)
                    image.d_w = UInt32(width)
                    image.d_h = UInt32(height)
                    image.x_chroma_shift = 1
                    image.y_chroma_shift = 1
                    image.bps = 12
                    image.planes = (UnsafeMutablePointer(mutating: y.baseAddress), UnsafeMutablePointer(mutating: u.baseAddress),
                                    UnsafeMutablePointer(mutating: v.baseAddress), nil)
                    image.stride = (Int32(width), Int32(width / 2), Int32(width / 2), 0)
                    guard vpx_codec_encode(&context, &image, pts, 1, 0, UInt(VPX_DL_REALTIME)) == VPX_CODEC_OK else { return }
                    var iterator: vpx_codec_iter_t?
                    var buffer: UnsafeRawPointer?
                    var size = 0
                    var key: Int32 = 0
                    while sb_vpx_next_frame(&context, &iterator, &buffer, &size, &key) != 0, let buffer {
                        frames.append(Frame(bytes: Array(UnsafeRawBufferPointer(start: buffer, count: size)), keyframe: key != 0))
                    }
                }
            }
        }
        image.planes = (nil, nil, nil, nil)
        return frames
    }
}
