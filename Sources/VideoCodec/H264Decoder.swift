import CAV

/// An H.264 decoder (libavcodec's): access units in Annex B (`H264FrameAssembler`) in, pictures out. One per
/// stream; not shared between threads.
public final class H264Decoder: PictureDecoder {
    public enum Failure: Error, Equatable {
        case initialisation(String)
    }

    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?

    public init() throws(Failure) {
        _ = LibAV.quiet
        guard let codec = avcodec_find_decoder(AV_CODEC_ID_H264) else { throw .initialisation("no H.264 decoder in libavcodec") }
        context = avcodec_alloc_context3(codec)
        frame = av_frame_alloc()
        packet = av_packet_alloc()
        guard let context, frame != nil, packet != nil else { throw .initialisation("out of memory") }
        // One thread: a picture comes out for the unit that went in, not frames later.
        context.pointee.thread_count = 1
        guard avcodec_open2(context, codec, nil) >= 0 else { throw .initialisation("the H.264 decoder did not open") }
    }

    deinit {
        avcodec_free_context(&context)
        av_frame_free(&frame)
        av_packet_free(&packet)
    }

    /// Odd sizes are cropped to even ones; pictures not in 4:2:0 are refused. The decoder may hold a picture
    /// back until the next unit (a stream that could reorder); `last` drains it at once.
    public func decode(_ unit: [UInt8]) -> I420Image? { decode(unit, last: false) }

    /// The picture of one key frame on its own (its size, for a file's header).
    public static func picture(of keyframe: [UInt8]) -> I420Image? { (try? H264Decoder())?.decode(keyframe, last: true) }

    private func decode(_ unit: [UInt8], last: Bool) -> I420Image? {
        guard let context, let frame, let packet, !unit.isEmpty, av_new_packet(packet, Int32(unit.count)) >= 0 else { return nil }
        defer { av_packet_unref(packet) }
        unit.withUnsafeBufferPointer { packet.pointee.data.update(from: $0.baseAddress!, count: unit.count) }
        guard avcodec_send_packet(context, packet) >= 0 else { return nil }
        if last { _ = avcodec_send_packet(context, nil) }
        var picture: I420Image?
        while avcodec_receive_frame(context, frame) >= 0 {
            defer { av_frame_unref(frame) }
            let format = frame.pointee.format
            guard format == AV_PIX_FMT_YUV420P.rawValue || format == AV_PIX_FMT_YUVJ420P.rawValue,
                  let y = frame.pointee.data.0, let u = frame.pointee.data.1, let v = frame.pointee.data.2 else { continue }
            picture = I420Image(copying: (y, u, v), strides: (Int(frame.pointee.linesize.0), Int(frame.pointee.linesize.1), Int(frame.pointee.linesize.2)),
                                width: Int(frame.pointee.width), height: Int(frame.pointee.height))
        }
        return picture
    }
}
