import CAV
import Foundation
import Synchronization

/// Encodes pictures and sound once — H.264 video (libx264 through libavcodec: real time, no B-frames, a key
/// frame every `keyframeInterval` pictures and no others) and AAC audio (libavcodec's encoder, 48 kHz mono) — and writes them
/// to each of its outputs through libavformat:
///
/// - `mp4`: a fragmented MP4 file, as the Video API's composed archives are (a fragment from each key frame, the
///   index up front, so a file cut short — the server stopped mid-recording — still plays up to its last
///   fragment); it plays in browsers, in AVPlayer and everywhere MP4 does;
/// - `hls`: an HLS playlist (`live.m3u8`) and its MPEG-TS segments (`segment-N.ts`, one per key frame
///   interval) in a directory, a sliding window of the last six segments or, with `dvr`, of two hours (older
///   segments deleted either way);
/// - `lowLatencyHLS`: the same as low-latency HLS (`LowLatencyHLSOutput`): the segments also as partial segments
///   of at most half a second, listed as soon as each is written, for players that load them as they come
///   (blocking playlist reloads wait on the output's `HLSProgress`);
/// - `rtmp`: an RTMP or RTMPS server, as FLV (`rtmp://host/app/streamName`); an RTMPS server's certificate must
///   chain to the system store (or the CA file given) and name its host.
///
/// File outputs are written as the pictures come; a failure there is the writer's `failure`. An RTMP output
/// is written by a thread of its own (`NetworkOutput`) from a bounded queue, so a slow or unreachable server
/// never holds the encoding up: it connects again while the writer runs, and its `statuses` say how it is.
///
/// Pictures come as `I420Image`s with their number at `frameRate`; sound as 16-bit samples at 48 kHz, in
/// order, any number at a time. Not thread-safe: one recording's task owns it.
public final class MediaWriter {
    public enum Failure: Error, CustomStringConvertible {
        case setUp(String)
        case write(String)

        public var description: String {
            switch self {
            case .setUp(let why): "set-up: \(why)"
            case .write(let why): "write: \(why)"
            }
        }
    }

    public enum Output: Sendable, Equatable {
        case mp4(path: String)
        case hls(directory: String, dvr: Bool)
        case lowLatencyHLS(directory: String, progress: HLSProgress)
        /// `trusting`: the CA file an `rtmps://` server's certificate must chain to (nil: the system store).
        case rtmp(url: String, trusting: String? = nil)

        /// The HLS playlist's name in its directory.
        public static let playlist = "live.m3u8"
        /// With `dvr`, the segments an HLS playlist keeps: two hours, as the Video API's DVR window.
        public static let dvrSegments = 3_600
    }

    /// How an output is doing: an MP4 file is `live` from the start, an HLS one once its playlist lists a
    /// segment (a low-latency one, a part); an RTMP output `connecting` until its server takes the stream, `offline` while it connects again after losing it; every output `ended` once closed.
    public enum OutputStatus: String, Sendable {
        case connecting, live, offline, ended
    }

    public struct Video: Sendable {
        public var width: Int
        public var height: Int
        public var frameRate: Int
        /// kb/s.
        public var bitrate: Int
        public var keyframeInterval: Int
        /// A constant quantizer (x264's `qp`, lower is better) instead of `bitrate`: the size follows the picture.
        public var quantizer: Int?

        public init(width: Int, height: Int, frameRate: Int, bitrate: Int, keyframeInterval: Int, quantizer: Int? = nil) {
            self.width = width
            self.height = height
            self.frameRate = frameRate
            self.bitrate = bitrate
            self.keyframeInterval = keyframeInterval
            self.quantizer = quantizer
        }
    }

    public static let audioRate = 48_000

    private var video: Encoder?
    private var audio: Encoder?
    private var files: [any PacketOutput] = []
    private var lowLatency: [LowLatencyHLSOutput] = []
    private var networks: [NetworkOutput] = []
    private let outputs: [Output]
    private let frame: UnsafeMutablePointer<AVFrame>
    private let packet: UnsafeMutablePointer<AVPacket>
    /// Samples waiting for a whole AAC frame (1,024), and the number of samples encoded so far.
    private var pending: [Int16] = []
    private var samplesWritten: Int64 = 0
    private var closed = false
    /// Whether the HLS output's playlist exists yet.
    private var playlistWritten = false
    /// The first error of the encoders or of a file output; nothing more is encoded after it.
    public private(set) var failure: String?

    /// An open encoder, and what a muxer needs of it, fixed once it is open (read by `NetworkOutput`'s thread
    /// too): its parameters with the global headers, its time base, its stream's index.
    struct Encoder {
        var context: UnsafeMutablePointer<AVCodecContext>
        var parameters: UnsafeMutablePointer<AVCodecParameters>
        var timeBase: AVRational
        var index: Int32
        var isVideo: Bool { parameters.pointee.codec_type == AVMEDIA_TYPE_VIDEO }
    }

    /// Opens the encoders for `video` and/or sound (at least one) and each of `outputs` (at least one).
    public init(_ outputs: [Output], video: Video?, audio: Bool) throws(Failure) {
        precondition(video != nil || audio, "a recording of something")
        precondition(!outputs.isEmpty, "somewhere to write")
        _ = LibAV.quiet
        guard let frame = av_frame_alloc(), let packet = av_packet_alloc() else { throw .setUp("out of memory") }
        self.frame = frame
        self.packet = packet
        self.outputs = outputs
        do {
            var index: Int32 = 0
            if let video {
                self.video = try Self.videoEncoder(video, index: index)
                index += 1
            }
            if audio { self.audio = try Self.audioEncoder(index: index) }
            let encoders = [self.video, self.audio].compactMap { $0 }
            for output in outputs {
                switch output {
                case .mp4(let path):
                    var options: OpaquePointer?
                    av_dict_set(&options, "movflags", "frag_keyframe+empty_moov+default_base_moof", 0)
                    files.append(try FileOutput(format: "mp4", url: path, encoders: encoders, options: &options))
                case .hls(let directory, let dvr):
                    var options: OpaquePointer?
                    av_dict_set(&options, "hls_time", "2", 0)
                    av_dict_set(&options, "hls_list_size", dvr ? "\(Output.dvrSegments)" : "6", 0)
                    av_dict_set(&options, "hls_flags", "delete_segments+independent_segments", 0)
                    av_dict_set(&options, "hls_segment_filename", directory + "/segment-%d.ts", 0)
                    files.append(try FileOutput(format: "hls", url: directory + "/" + Output.playlist, encoders: encoders, options: &options))
                case .lowLatencyHLS(let directory, let progress):
                    let seconds = video.map { Double($0.keyframeInterval) / Double($0.frameRate) } ?? 2
                    lowLatency.append(LowLatencyHLSOutput(directory: directory, progress: progress, encoders: encoders, segmentSeconds: seconds))
                    files.append(lowLatency.last!)
                case .rtmp(let url, let trusting):
                    networks.append(NetworkOutput(url: url, trusting: trusting, encoders: encoders))
                }
            }
        } catch {
            release()
            throw error
        }
    }

    deinit {
        release()
        var frame: UnsafeMutablePointer<AVFrame>? = frame
        av_frame_free(&frame)
        var packet: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&packet)
    }

    /// Each output's status, in the order given.
    public var statuses: [OutputStatus] {
        var networks = self.networks.makeIterator()
        var lowLatency = self.lowLatency.makeIterator()
        return outputs.map { output in
            guard !closed else { return .ended }
            switch output {
            case .mp4: return .live
            // Live once its first segment is listed (looked for until then only).
            case .hls(let directory, _):
                if !playlistWritten { playlistWritten = FileManager.default.fileExists(atPath: directory + "/" + Output.playlist) }
                return playlistWritten ? .live : .connecting
            case .lowLatencyHLS: return lowLatency.next()?.isLive == true ? .live : .connecting
            case .rtmp: return networks.next()?.status ?? .ended
            }
        }
    }

    private static func videoEncoder(_ video: Video, index: Int32) throws(Failure) -> Encoder {
        precondition(video.width % 2 == 0 && video.height % 2 == 0 && video.frameRate > 0)
        guard let codec = avcodec_find_encoder_by_name("libx264") else { throw .setUp("no libx264 encoder in libavcodec") }
        guard let context = avcodec_alloc_context3(codec) else { throw .setUp("out of memory") }
        context.pointee.width = Int32(video.width)
        context.pointee.height = Int32(video.height)
        context.pointee.pix_fmt = AV_PIX_FMT_YUV420P
        context.pointee.time_base = AVRational(num: 1, den: Int32(video.frameRate))
        context.pointee.framerate = AVRational(num: Int32(video.frameRate), den: 1)
        if let quantizer = video.quantizer {
            av_opt_set(context.pointee.priv_data, "qp", "\(quantizer)", 0)
        } else {
            context.pointee.bit_rate = Int64(video.bitrate) * 1_000
            context.pointee.rc_max_rate = Int64(video.bitrate) * 1_000
            context.pointee.rc_buffer_size = Int32(video.bitrate * 1_000)
        }
        context.pointee.gop_size = Int32(video.keyframeInterval)
        context.pointee.max_b_frames = 0
        // Main profile, as players everywhere take it; fast enough to run beside the media plane.
        av_opt_set(context.pointee.priv_data, "preset", "veryfast", 0)
        av_opt_set(context.pointee.priv_data, "tune", "zerolatency", 0)
        av_opt_set(context.pointee.priv_data, "profile", "main", 0)
        // Key frames every `keyframeInterval` exactly, none at scene changes: segments and fragments of one length.
        av_opt_set(context.pointee.priv_data, "x264-params", "scenecut=0", 0)
        return try open(context, codec: codec, index: index)
    }

    private static func audioEncoder(index: Int32) throws(Failure) -> Encoder {
        guard let codec = avcodec_find_encoder(AV_CODEC_ID_AAC) else { throw .setUp("no AAC encoder in libavcodec") }
        guard let context = avcodec_alloc_context3(codec) else { throw .setUp("out of memory") }
        context.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
        context.pointee.sample_rate = Int32(audioRate)
        av_channel_layout_default(&context.pointee.ch_layout, 1)
        context.pointee.bit_rate = 64_000
        context.pointee.time_base = AVRational(num: 1, den: Int32(audioRate))
        return try open(context, codec: codec, index: index)
    }

    /// Opens an encoder with its headers apart from its packets (MP4 and FLV want them so; the MPEG-TS muxer
    /// puts them back before each key frame itself).
    private static func open(_ context: UnsafeMutablePointer<AVCodecContext>, codec: UnsafePointer<AVCodec>, index: Int32) throws(Failure) -> Encoder {
        context.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER
        let status = avcodec_open2(context, codec, nil)
        guard status >= 0, let parameters = avcodec_parameters_alloc() else {
            var context: UnsafeMutablePointer<AVCodecContext>? = context
            avcodec_free_context(&context)
            throw .setUp("encoder: \(message(status))")
        }
        avcodec_parameters_from_context(parameters, context)
        return Encoder(context: context, parameters: parameters, timeBase: context.pointee.time_base, index: index)
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

    /// Sends `frame` (nil: the end) to an encoder and gives each output what it gives back.
    private func encode(_ frame: UnsafeMutablePointer<AVFrame>?, with encoder: Encoder) {
        let sent = avcodec_send_frame(encoder.context, frame)
        guard sent >= 0 else { return fail("encode: \(Self.message(sent))") }
        while true {
            let received = avcodec_receive_packet(encoder.context, packet)
            if received == sb_averror_eagain() || received == sb_averror_eof() { return }
            guard received >= 0 else { return fail("encode: \(Self.message(received))") }
            packet.pointee.stream_index = encoder.index
            for network in networks { network.enqueue(packet, from: encoder) }
            for file in files {
                if let why = file.write(packet, from: encoder) { fail(why) }
            }
            av_packet_unref(packet)
        }
    }

    /// Encodes what is left and ends every output: the files' ends written, each RTMP output's queue sent (for
    /// a few seconds at most) before it disconnects.
    public func close() {
        guard !closed else { return }
        if failure == nil {
            encodePendingAudio(flush: true)
            if let video { encode(nil, with: video) }
            if let audio { encode(nil, with: audio) }
            for file in files {
                if let why = file.finish() { fail(why) }
            }
        }
        closed = true
        release()
    }

    private func fail(_ why: String) {
        if failure == nil { failure = why }
    }

    /// Frees the encoders and closes the outputs (once).
    private func release() {
        for network in networks { network.finish() }
        networks = []
        files = []
        lowLatency = []
        for encoder in [video, audio].compactMap({ $0 }) {
            var context: UnsafeMutablePointer<AVCodecContext>? = encoder.context
            avcodec_free_context(&context)
            var parameters: UnsafeMutablePointer<AVCodecParameters>? = encoder.parameters
            avcodec_parameters_free(&parameters)
        }
        video = nil
        audio = nil
    }

    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        av_strerror(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// One libavformat muxer: an output context with a stream per encoder, its header written.
final class Muxer {
    let context: UnsafeMutablePointer<AVFormatContext>
    private let scratch: UnsafeMutablePointer<AVPacket>
    private var finished = false
    /// Where an in-memory muxer's bytes go (nil: a file or connection).
    private let memory: MemorySink?

    /// Opens `url` as `format` (its file or connection too, with `connection`'s options, unless the muxer opens its
    /// own, as HLS's does); `interrupt` can abort what blocks.
    /// With `inMemory`, what it writes stays in memory (`takeMemory`) and `url` is not opened.
    init(format: String, url: String, encoders: [MediaWriter.Encoder], options: inout OpaquePointer?,
         connection: UnsafeMutablePointer<OpaquePointer?>? = nil, interrupt: AVIOInterruptCB? = nil, inMemory: Bool = false) throws(MediaWriter.Failure) {
        defer {
            av_dict_free(&options)
            if let connection { av_dict_free(connection) }
        }
        var context: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_alloc_output_context2(&context, nil, format, url) >= 0, let context else { throw .setUp("no \(format) muxer") }
        guard let scratch = av_packet_alloc() else {
            avformat_free_context(context)
            throw .setUp("out of memory")
        }
        self.context = context
        self.scratch = scratch
        memory = inMemory ? MemorySink() : nil
        if let interrupt { context.pointee.interrupt_callback = interrupt }
        for encoder in encoders {
            guard let stream = avformat_new_stream(context, nil), avcodec_parameters_copy(stream.pointee.codecpar, encoder.parameters) >= 0 else {
                throw .setUp("out of memory")
            }
            stream.pointee.time_base = encoder.timeBase
        }
        if let memory {
            guard let pb = memory.open() else { throw .setUp("out of memory") }
            context.pointee.pb = pb
        } else if context.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0 {
            var callback = context.pointee.interrupt_callback
            let opened = avio_open2(&context.pointee.pb, url, AVIO_FLAG_WRITE, &callback, connection)
            guard opened >= 0 else { throw .setUp("cannot open \(url): \(MediaWriter.message(opened))") }
        }
        let status = avformat_write_header(context, &options)
        guard status >= 0 else { throw .setUp("header: \(MediaWriter.message(status))") }
    }

    deinit {
        if memory != nil, context.pointee.pb != nil {
            av_freep(&context.pointee.pb.pointee.buffer)
            avio_context_free(&context.pointee.pb)
        } else if context.pointee.oformat.pointee.flags & AVFMT_NOFILE == 0, context.pointee.pb != nil {
            avio_closep(&context.pointee.pb)
        }
        avformat_free_context(context)
        var scratch: UnsafeMutablePointer<AVPacket>? = scratch
        av_packet_free(&scratch)
    }

    /// Writes a reference to `packet` (left as it was), its times in the stream's time base; nil or why not.
    func write(_ packet: UnsafeMutablePointer<AVPacket>, from encoder: MediaWriter.Encoder) -> String? {
        guard av_packet_ref(scratch, packet) >= 0 else { return "out of memory" }
        return send(scratch, from: encoder)
    }

    /// Writes `packet`, taking its data (it is left blank).
    func send(_ packet: UnsafeMutablePointer<AVPacket>, from encoder: MediaWriter.Encoder) -> String? {
        let stream = context.pointee.streams[Int(encoder.index)]!
        av_packet_rescale_ts(packet, encoder.timeBase, stream.pointee.time_base)
        let written = av_interleaved_write_frame(context, packet)
        av_packet_unref(packet)
        return written < 0 ? MediaWriter.message(written) : nil
    }

    /// Writes out every packet it holds back (to interleave the streams, or to fill a PES packet).
    func flush() {
        av_interleaved_write_frame(context, nil)
        av_write_frame(context, nil)
        avio_flush(context.pointee.pb)
    }

    /// What an in-memory muxer wrote since the last time, taken.
    func takeMemory() -> [UInt8] {
        avio_flush(context.pointee.pb)
        return memory!.take()
    }

    /// Writes the end (once); nil or why not.
    func finish() -> String? {
        guard !finished else { return nil }
        finished = true
        let status = av_write_trailer(context)
        return status < 0 ? "trailer: \(MediaWriter.message(status))" : nil
    }
}

/// Bytes a muxer writes, kept in memory: its I/O context writes here through a C callback.
final class MemorySink {
    private(set) var bytes: [UInt8] = []

    /// An I/O context writing to this sink (which must outlive it), or nil when out of memory.
    func open() -> UnsafeMutablePointer<AVIOContext>? {
        let size: Int32 = 32_768
        guard let buffer = av_malloc(Int(size))?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let context = avio_alloc_context(buffer, size, 1, Unmanaged.passUnretained(self).toOpaque(), nil, { opaque, data, count in
            let sink = Unmanaged<MemorySink>.fromOpaque(opaque!).takeUnretainedValue()
            sink.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(count)))
            return count
        }, nil)
        if context == nil { av_free(buffer) }
        return context
    }

    func take() -> [UInt8] {
        defer { bytes = [] }
        return bytes
    }
}

/// An output written as packets come, on the encoding's thread.
protocol PacketOutput: AnyObject {
    /// Writes a reference to `packet` (left as it was); nil or why not (nothing more is written then).
    func write(_ packet: UnsafeMutablePointer<AVPacket>, from encoder: MediaWriter.Encoder) -> String?
    /// Writes the end; nil or why not.
    func finish() -> String?
}

/// A file output: written as packets come.
final class FileOutput: PacketOutput {
    private let muxer: Muxer
    private var broken = false

    init(format: String, url: String, encoders: [MediaWriter.Encoder], options: inout OpaquePointer?) throws(MediaWriter.Failure) {
        muxer = try Muxer(format: format, url: url, encoders: encoders, options: &options)
    }

    func write(_ packet: UnsafeMutablePointer<AVPacket>, from encoder: MediaWriter.Encoder) -> String? {
        guard !broken else { return nil }
        let why = muxer.write(packet, from: encoder)
        broken = why != nil
        return why
    }

    func finish() -> String? { broken ? nil : muxer.finish() }
}

/// An RTMP output, written by a thread of its own from a queue of packets: it connects (and connects again
/// two seconds after losing the server), skips to the next video key frame whenever it starts or fell behind
/// (more than `maxQueued` packets waiting: the queue is dropped), and never blocks the encoding. A blocking
/// connect or write gives up after `timeout` (libavformat's interrupt callback), so `finish` returns within
/// seconds even from a server that stopped reading.
final class NetworkOutput: @unchecked Sendable {
    static let maxQueued = 400
    static let timeout: UInt64 = 5_000_000_000
    static let retry: TimeInterval = 2

    let url: String
    private let trusting: String?
    private let encoders: [MediaWriter.Encoder]
    private let condition = NSCondition()
    /// Under `condition`: packets to send (owned), whether some were dropped since, whether the writer closed,
    /// the status.
    private var queue: [(UnsafeMutablePointer<AVPacket>, MediaWriter.Encoder)] = []
    private var dropped = false
    private var closing = false
    private var current: MediaWriter.OutputStatus = .connecting
    /// When what blocks now gives up (monotonic nanoseconds; 0: nothing blocks).
    private let deadline = Atomic<UInt64>(0)
    private let done = DispatchSemaphore(value: 0)
    private let hasVideo: Bool

    /// Its thread reads the encoders' parameters at each connection: they must stay as they are until `finish`.
    init(url: String, trusting: String?, encoders: [MediaWriter.Encoder]) {
        self.url = url
        self.trusting = trusting
        self.encoders = encoders
        hasVideo = encoders.contains(where: \.isVideo)
        let thread = Thread { [self] in run() }
        thread.name = "rtmp-output"
        thread.start()
    }

    var status: MediaWriter.OutputStatus {
        condition.lock()
        defer { condition.unlock() }
        return current
    }

    func enqueue(_ packet: UnsafeMutablePointer<AVPacket>, from encoder: MediaWriter.Encoder) {
        guard let copy = av_packet_clone(packet) else { return }
        condition.lock()
        if queue.count >= Self.maxQueued {
            dropQueue()
            dropped = true
        }
        queue.append((copy, encoder))
        condition.signal()
        condition.unlock()
    }

    /// Sends what is queued, disconnects and waits for the thread to end.
    func finish() {
        condition.lock()
        closing = true
        condition.signal()
        condition.unlock()
        done.wait()
    }

    /// Under `condition`.
    private func dropQueue() {
        for (packet, _) in queue {
            var packet: UnsafeMutablePointer<AVPacket>? = packet
            av_packet_free(&packet)
        }
        queue.removeAll()
    }

    private func set(_ status: MediaWriter.OutputStatus) {
        condition.lock()
        current = status
        condition.unlock()
    }

    private func arm() { deadline.store(DispatchTime.now().uptimeNanoseconds + Self.timeout, ordering: .relaxed) }

    private func run() {
        defer {
            condition.lock()
            dropQueue()
            current = .ended
            condition.unlock()
            done.signal()
        }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        let interrupt = AVIOInterruptCB(callback: { opaque in
            let output = Unmanaged<NetworkOutput>.fromOpaque(opaque!).takeUnretainedValue()
            let deadline = output.deadline.load(ordering: .relaxed)
            return deadline != 0 && DispatchTime.now().uptimeNanoseconds > deadline ? 1 : 0
        }, opaque: opaque)
        while true {
            condition.lock()
            let stop = closing
            dropQueue()  // what came while it was not connected is old now
            condition.unlock()
            if stop { return }
            arm()
            var options: OpaquePointer?, connection: OpaquePointer?
            // RTMPS: the server's certificate checked (libavformat's TLS does not unless asked), against `trusting`.
            av_dict_set(&connection, "tls_verify", "1", 0)
            if let trusting { av_dict_set(&connection, "ca_file", trusting, 0) }
            let muxer = try? Muxer(format: "flv", url: url, encoders: encoders, options: &options, connection: &connection, interrupt: interrupt)
            deadline.store(0, ordering: .relaxed)
            if let muxer {
                set(.live)
                let closed = send(to: muxer)
                if closed { return }
            }
            set(.offline)
            // Again after a pause, unless the writer closes meanwhile.
            condition.lock()
            let until = Date(timeIntervalSinceNow: Self.retry)
            while !closing, condition.wait(until: until) {}
            condition.unlock()
        }
    }

    /// Sends queued packets to a connected server until it fails (false) or the writer closes and everything
    /// queued is sent (true).
    private func send(to muxer: Muxer) -> Bool {
        var waitingForKey = hasVideo
        while true {
            condition.lock()
            while queue.isEmpty && !closing { condition.wait() }
            if queue.isEmpty {
                condition.unlock()
                arm()
                _ = muxer.finish()
                deadline.store(0, ordering: .relaxed)
                return true
            }
            let (packet, encoder) = queue.removeFirst()
            if dropped { waitingForKey = hasVideo }
            dropped = false
            condition.unlock()
            var owned: UnsafeMutablePointer<AVPacket>? = packet
            defer { av_packet_free(&owned) }
            if waitingForKey {
                guard encoder.isVideo, packet.pointee.flags & AV_PKT_FLAG_KEY != 0 else { continue }
                waitingForKey = false
            }
            arm()
            let failed = muxer.send(packet, from: encoder) != nil
            deadline.store(0, ordering: .relaxed)
            if failed { return false }
        }
    }
}
