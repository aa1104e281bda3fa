import CVPX

/// A VP8 decoder (libvpx): whole frames in, pictures out. One per stream; not shared between threads.
public final class VP8Decoder {
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
        let w = Int(image.d_w) & ~1, h = Int(image.d_h) & ~1
        guard w >= 2, h >= 2, image.fmt == VPX_IMG_FMT_I420, let yp = image.planes.0, let up = image.planes.1, let vp = image.planes.2 else {
            return nil
        }
        var out = I420Image(width: w, height: h)
        func plane(_ src: UnsafeMutablePointer<UInt8>, _ stride: Int32, _ pw: Int, _ ph: Int, into dst: inout [UInt8]) {
            dst.withUnsafeMutableBufferPointer { d in
                for row in 0..<ph { (d.baseAddress! + row * pw).update(from: src + row * Int(stride), count: pw) }
            }
        }
        plane(yp, image.stride.0, w, h, into: &out.y)
        plane(up, image.stride.1, w / 2, h / 2, into: &out.u)
        plane(vp, image.stride.2, w / 2, h / 2, into: &out.v)
        return out
    }
}
