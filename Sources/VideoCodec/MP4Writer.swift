import CAV

/// Writes pictures and sound as an MP4 file, as the Video API's composed archives are: H.264 video (libx264
/// through libavcodec: real time, no B-frames, a key frame every `keyframeInterval` pictures) and AAC audio
/// (libavcodec's encoder, 48 kHz mono), muxed by libavformat. The file is fragmented (a fragment from each key
/// frame, the index up front), so one cut short — the server stopped mid-recording — still plays up to its last
/// fragment; it plays in browsers, in AVPlayer and everywhere MP4 does.
///
/// Pictures come as `I420Image`s with their number at `frameRate`; sound as 16-bit samples at 48 kHz, in
/// order, any number at a time. Not thread-safe: one recording's task owns it.
public final class MP4Writer {
    public enum Failure: Error, CustomStringConvertible {
        case setUp(String)
        case write(String)

        public var description: String {
            switch self {
            case .setUp(let why): "MP4 set-up: \(why)"
            case .write(let why): "MP4 write: \(why)"
            }
        }
    }

    public struct Video: Sendable {
        public var width: Int
        public var height: Int
        public var frameRate: Int
        /// kb/s.
        public var bitrate: Int
        public var keyframeInterval: Int

        public init(width: Int, height: Int, frameRate: Int, bitrate: Int, keyframeInterval: Int) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.bitrate = bitrate
            self.keyframeInterval = keyframeInterval
        }
    }

    public static let audioRate = 48_000

    private var format: UnsafeMutablePointer<AVFormatContext>?
    private var video: Encoder?
    private var audio: Encoder?
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// Samples waiting for a whole AAC frame (1,024), and the number of samples encoded so far.
    private var pending: [Int16] = []
    private var samplesWritten: Int64 = 0
    private var closed = false
    /// The first write error; the file is abandoned after it.
    public private(set) var failure: String?

    private struct Encoder {
        var context: UnsafeMutablePointer<AVCodecContext>
        var stream: UnsafeMutablePointer<AVStream>
    }

    /// Opens `path` for `video` and/or sound (at least one).
    public init(path: String, video: Video?, audio: Bool) throws(Failure) {
        precondition(video != nil || audio, "an MP4 file of something")
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else { throw .setUp("out of memory") }
        self.frame = frame
        self.packet = packet
        var format: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&format, nil, "mp4", path) >= 0, let format else { throw .setUp("no MP4 muxer") }
        self.format = format
        do {
            if let video { self.video = try Self.videoEncoder(video, format: format) }
            if audio { self.audio = try Self.audioEncoder(format: format) }
            guard avio_open(&format.pointee.pb, path, AVIO_FLAG_WRITE) >= 0 else { throw Failure.setUp("cannot create \(path)") }
            var options: OpaquePointer?
            av_dict_set(&options, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0)
            let status = avformat_write_header(format, &options)
            av_dict_free(&options)
            guard status >= 0 else { throw Failure.setUp("header: \(Self.message(status))") }
        } catch {
            release()
            throw error as! Failure
        }
    }

    deinit {
        release()
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
    }

    private static func videoEncoder(_ video: Video, format: UnsafeMutablePointer<AVFormatContext>) throws(Failure) -> Encoder {
        precondition(video.width % 2 == 0 && video.height % 2 == 0 && video.frameRate > 0)
        guard let codec = avcodec_find_encoder_by_name("libx264") else { throw .setUp("no libx264 encoder in libavcodec") }
        guard let context = avcodec_alloc_context3(codec) else { throw .setUp("out of memory") }
        context.pointee.width = Int32(video.width)
        context.pointee.height = Int32(video.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        context.pointee.time_base = AVRational(num: 1, den: Int32(video.frameRate))
        context.pointee.framerate = AVRational(num: Int32(video.frameRate), den: 1)
        context.pointee.bit_rate = Int64(video.bitrate) * 1_000
        context.pointee.rc_max_rate = Int64(video.bitrate) * 1_000
        context.pointee.rc_buffer_size = Int32(video.bitrate * 1_000)
        context.pointee.gop_size = Int32(video.keyframeInterval)
        context.pointee.max_b_frames = 0
        // Main profile, as players everywhere take it; fast enough to run beside the media plane.
        av_opt_set(context.pointee.priv_data, "preset", "veryfast", 0)
        av_opt_set(context.pointee.priv_data, "tune", "zerolatency", 0)
        av_opt_set(context.pointee.priv_data, "profile", "main", 0)
        return try open(context, codec: codec, format: format)
    }

    private static func audioEncoder(format: UnsafeMutablePointer<AVFormatContext>) throws(Failure) -> Encoder {
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else { throw .setUp("no AAC encoder in libavcodec") }
        guard let context = avcodec_alloc_context3(codec) else { throw .setUp("out of memory") }
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(audioRate)
        av_channel_layout_default(&context.pointee.ch_layout, 1)
        context.pointee.bit_rate = 64_000
        context.pointee.time_base = AVRational(num: 1, den: Int32(audioRate))
        return try open(context, codec: codec, format: format)
    }

    private static func open(_ context: UnsafeMutablePointer<AVCodecContext>, codec: UnsafePointer<AVCodec>,
                             format: UnsafeMutablePointer<AVFormatContext>) throws(Failure) -> Encoder {
        var context: UnsafeMutablePointer<AVCodecContext>? = context
        if format.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0 { context!.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
        let status = avcodec_open2(context, codec, nil)
        guard status >= 0, let stream = avformat_new_stream(format, nil),
              avcodec_parameters_from_context(stream.pointee.codecpar, context) >= 0 else {
            avcodec_free_context(&context)
            throw .setUp("encoder: \(message(status))")
        }
        stream.pointee.time_base = context!.pointee.time_base
        return Encoder(context: context!, stream: stream)
    }

    /// Adds picture number `index` (its time is `index / frameRate`).
    public func add(_ picture: I420Image, index: Int64) {
        guard let video, failure == nil, !closed else { return }
        precondition(picture.width == Int(video.context.pointee.width) && picture.height == Int(video.context.pointee.height))
        av_frame_unref(frame)
        frame.pointee.format = AV_PIX_FMT_YUV420P.rawValue
        frame.pointee.width = video.context.pointee.width
        frame.pointee.height = video.context.pointee.height
        guard av_frame_get_buffer(frame, 0) >= 0 else { return fail("no picture buffer") }
        func copy(_ plane: [UInt8], into data: UnsafeMutablePointer<UInt8>?, stride: Int32, width: Int, rows: Int) {
            guard let data else { return }
            plane.withUnsafeBufferPointer { source in
                for row in 0..<rows { (data + row * Int(stride)).update(from: source.baseAddress! + row * width, count: width) }
            }
        }
        copy(picture.y, into: frame.pointee.data.0, stride: frame.pointee.linesize.0, width: picture.width, rows: picture.height)
        copy(picture.u, into: frame.pointee.data.1, stride: frame.pointee.linesize.1, width: picture.width / 2, rows: picture.height / 2)
        copy(picture.v, into: frame.pointee.data.2, stride: frame.pointee.linesize.2, width: picture.width / 2, rows: picture.height / 2)
        frame.pointee.pts = index
        encode(frame, with: video)
    }

    /// Adds sound that follows what came before (48 kHz mono).
    public func add(samples: [Int16]) {
        guard audio != nil, failure == nil, !closed else { return }
        pending += samples
        encodePendingAudio(flush: false)
    }

    /// Encodes whole AAC frames from `pending` (with `flush`, the rest padded with silence).
    private func encodePendingAudio(flush: Bool) {
        guard let audio else { return }
        let size = Int(audio.context.pointee.frame_size)
        var used = 0
        while failure == nil, pending.count - used >= size || (flush && pending.count > used) {
            av_frame_unref(frame)
            frame.pointee.format = AV_SAMPLE_FMT_FLTP.rawValue
            frame.pointee.sample_rate = Int32(Self.audioRate)
            frame.pointee.nb_samples = Int32(size)
            av_channel_layout_copy(&frame.pointee.ch_layout, &audio.context.pointee.ch_layout)
            guard av_frame_get_buffer(frame, 0) >= 0, let data = frame.pointee.data.0 else { return fail("no sound buffer") }
            let out = UnsafeMutableRawPointer(data).assumingMemoryBound(to: Float.self)
            let n = min(size, pending.count - used)
            for i in 0..<size { out[i] = i < n ? Float(pending[used + i]) / 32_768 : 0 }
            used += n
            frame.pointee.pts = samplesWritten
            samplesWritten += Int64(size)
            encode(frame, with: audio)
        }
        pending.removeFirst(used)
    }

    /// Sends `frame` (nil: the end) to an encoder and writes what it gives back.
    private func encode(_ frame: UnsafeMutablePointer<AVFrame>?, with encoder: Encoder) {
        let sent = avcodec_send_frame(encoder.context, frame)
        guard sent >= 0 else { return fail("encode: \(Self.message(sent))") }
        while true {
            let received = avcodec_receive_packet(encoder.context, packet)
            if received == sb_averror_eagain() || received == sb_averror_eof() { return }
            guard received >= 0 else { return fail("encode: \(Self.message(received))") }
            av_packet_rescale_ts(packet, encoder.context.pointee.time_base, encoder.stream.pointee.time_base)
            packet.pointee.stream_index = encoder.stream.pointee.index
            let written = av_interleaved_write_frame(format, packet)  // takes the packet's data, leaves it blank
            guard written >= 0 else { return fail("\(Self.message(written))") }
        }
    }

    /// Encodes what is left, writes the end of the file and closes it.
    public func close() {
        guard !closed else { return }
        if failure == nil {
            encodePendingAudio(flush: true)
            if let video { encode(nil, with: video) }
            if let audio { encode(nil, with: audio) }
            if failure == nil, let format {
                let status = av_write_trailer(format)
                if status < 0 { fail("trailer: \(Self.message(status))") }
            }
        }
        closed = true
        release()
    }

    private func fail(_ why: String) {
        if failure == nil { failure = why }
    }

    /// Frees the encoders and closes the file (once).
    private func release() {
        for encoder in [video, audio].compactMap({ $0 }) {
            var context: UnsafeMutablePointer<AVCodecContext>? = encoder.context
            avcodec_free_context(&context)
        }
        video = nil
        audio = nil
        if let format {
            if format.pointee.pb != nil { avio_closep(&format.pointee.pb) }
            avformat_free_context(format)
            self.format = nil
        }
    }

    private static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
