import CVPX

/// What decodes a stream's frames into pictures: `VP8Decoder`, `H264Decoder`.
public protocol PictureDecoder: AnyObject {
    /// The picture a frame decodes to; nil for one the decoder refuses (corrupt, or a delta frame without its
    /// references), which the caller skips until the next key frame.
    func decode(_ frame: [UInt8]) -> I420Image?
}

/// A VP8 decoder (libvpx): whole frames in, pictures out. One per stream; not shared between threads.
public final class VP8Decoder: PictureDecoder {
    private var context = vpx_codec_ctx_t()
    private var ready = false

    public enum Failure: Error, Equatable {
        case initialisation(String)
    }

    public init() throws(Failure) {
        let status = sb_vpx_vp8_decoder_init(&context)
        guard status == VPX_CODEC_OK else { throw .initialisation(String(cString: vpx_codec_err_to_string(status))) }
        ready = true
    }

    deinit {
        if ready { vpx_codec_destroy(&context) }
    }

    /// The picture a frame decodes to; nil for a frame libvpx refuses (corrupt, or a delta frame without its
    /// references), which the caller skips until the next key frame. Odd sizes are cropped to even ones.
    public func decode(_ frame: [UInt8]) -> I420Image? {
        let status = frame.withUnsafeBufferPointer { vpx_codec_decode(&context, $0.baseAddress, UInt32($0.count), nil, 0) }
        guard status == VPX_CODEC_OK else { return nil }
        var iterator: vpx_codec_iter_t?
        var picture: I420Image?
        while let image = vpx_codec_get_frame(&context, &iterator) {
            picture = Self.copy(image.pointee)
        }
        return picture
    }

    private static func copy(_ image: vpx_image_t) -> I420Image? {
        guard image.fmt == VPX_IMG_FMT_I420, let y = image.planes.0, let u = image.planes.1, let v = image.planes.2 else { return nil }
        return I420Image(copying: (y, u, v), strides: (Int(image.stride.0), Int(image.stride.1), Int(image.stride.2)),
                         width: Int(image.d_w), height: Int(image.d_h))
    }
}
