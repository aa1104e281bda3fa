import CAV
import VideoCodec

/// An H.264 encoder (libavcodec's libx264) for the tests to make what `H264Decoder` reads: pictures in, access
/// units out in Annex B with the parameter sets in band, as a browser sends them.
final class H264TestEncoder {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>? = av_frame_alloc()
    private var packet: UnsafeMutablePointer<AVPacket>? = av_packet_alloc()

    init(width: Int, height: Int) {
        let codec = avcodec_find_encoder_by_name("libx264")!
        context = avcodec_alloc_context3(codec)
        context!.pointee.width = Int32(width)
        context!.pointee.height = Int32(height)
        context!.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        context!.pointee.time_base = AVRational(num: 1, den: 15)
        context!.pointee.max_b_frames = 0
        av_opt_set(context!.pointee.priv_data, "tune", "zerolatency", 0)
        precondition(avcodec_open2(context, codec, nil) >= 0)
    }

    deinit {
        avcodec_free_context(&context)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    func encode(_ picture: I420Image, pts: Int64) -> [[UInt8]] {
        guard let frame, let packet else { return [] }
        frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        frame.pointee.width = Int32(picture.width)
        frame.pointee.height = Int32(picture.height)
        precondition(av_frame_get_buffer(frame, 0) >= 0)
        defer { av_frame_unref(frame) }
        for (plane, data, stride, w, h) in [(picture.y, frame.pointee.data.0, frame.pointee.linesize.0, picture.width, picture.height),
                                            (picture.u, frame.pointee.data.1, frame.pointee.linesize.1, picture.width / 2, picture.height / 2),
                                            (picture.v, frame.pointee.data.2, frame.pointee.linesize.2, picture.width / 2, picture.height / 2)] {
            for row in 0..<h { for x in 0..<w { data![row * Int(stride) + x] = plane[row * w + x] } }
        }
        frame.pointee.pts = pts
        precondition(avcodec_send_frame(context, frame) >= 0)
        var units: [[UInt8]] = []
        while avcodec_receive_packet(context, packet) >= 0 {
            units.append(Array(UnsafeBufferPointer(start: packet.pointee.data, count: Int(packet.pointee.size))))
            av_packet_unref(packet)
        }
        return units
    }
}
