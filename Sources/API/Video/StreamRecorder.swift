import Foundation
import Live
import Media
import VideoCodec
import Wire

/// One stream of an individual-stream archive, written to a file as it arrives: its Opus packets one per
/// block, its video frames as `VideoFrameSource` assembles them, both tracks on one timeline (the arrival of
/// each track's first packet, RTP time after it), written in time order a second and a half behind the
/// newest frame. A VP8 stream's file is WebM (`<name>.webm`); an H.264 stream's is Matroska (`<name>.mkv`, as
/// the Video API names them), its NAL units length-prefixed under the `avcC` of its first key frame.
///
/// Owned by one archive's recording task; not shared.
final class StreamRecorder {
    let streamID: String
    let connectionData: String
    /// The file's name: `<name>.webm`, or `<name>.mkv` once the stream's video shows itself H.264.
    private(set) var filename: String
    private let name: String
    /// The media asked for (the file may lack one: a stream without it).
    let kinds: Set<MediaKind>
    /// Milliseconds from the archive's start to this file's first frame (0 until it has one).
    private(set) var startOffset: Int64 = 0
    private(set) var stopOffset: Int64 = 0
    private(set) var ended = false
    private var openFailure: String?

    private let directory: String
    var path: String { directory + "/" + filename }
    private let archiveStart: Date
    private var taps: [StreamTap]
    private var origin: UInt64?
    private var audio = TrackClock()
    private var video = TrackClock()
    /// By the codec the video's first packets name; a file is written behind what arrives, so a gap may wait long
    /// for its retransmission (`maxWait`).
    private var frames: VideoFrames?
    /// An H.264 stream's decoder configuration, from its first key frame with parameter sets.
    private var avcC: [UInt8]?
    private var videoSize: (width: Int, height: Int)?
    static let maxWait: UInt64 = 1_000_000_000
    /// Frames before the file is opened (it waits for the video's size); then the file keeps them, in time order,
    /// until the newest is `muxDelay` ms later.
    private var early: [WebMFile.Frame] = []
    private var newest: Int64 = 0
    private var file: WebMFile?

    /// Longer than a gap may wait, so frames completed by a late retransmission still go in time order.
    static let muxDelay: Int64 = 1_500
    /// Audio frames held while the video's first key frame is awaited, before the header is written without it.
    static let headerWait: Int64 = 3_000

    /// A track's RTP clock on the file's timeline: the first packet's arrival, then RTP time from it.
    struct TrackClock {
        var first: (time: Int64, timestamp: Int64)?
        var extended: Int64 = 0
        var clockRate = 90_000

        mutating func time(_ timestamp: UInt32, arrival: Int64) -> Int64 {
            guard let first else {
                extended = Int64(timestamp)
                self.first = (arrival, extended)
                return arrival
            }
            extended += Int64(Int32(bitPattern: timestamp &- UInt32(truncatingIfNeeded: extended)))
            return first.time + (extended - first.timestamp) * 1_000 / Int64(clockRate)
        }
    }

    init(streamID: String, connectionData: String, directory: String, name: String, kinds: Set<MediaKind>, taps: [StreamTap],
         archiveStart: Date) {
        self.streamID = streamID
        self.connectionData = connectionData
        self.kinds = kinds
        self.taps = taps
        self.archiveStart = archiveStart
        self.name = name
        self.directory = directory
        filename = name + ".webm"
    }

    var hasFile: Bool { file != nil }
    var size: Int { file?.size ?? 0 }
    var failure: String? { openFailure ?? file?.failure }

    /// Drains the stream's taps and writes what is complete; ends the recorder when its media is gone.
    func poll(bridge: any VideoMediaBridge) async {
        guard !ended else { return }
        var packets: [(StreamTap, ProducerTapPackets)] = []
        for tap in taps {
            do {
                packets.append((tap, try await bridge.drain(tap)))
            } catch {
                await finish(bridge: bridge)
                return
            }
        }
        for (tap, drained) in packets {
            if tap.kind == .video, frames == nil {
                frames = VideoFrames(codec: drained.codec, maxWait: Self.maxWait)
                guard frames != nil else {
                    // A codec not recorded here: stop taking it (the file keeps the audio).
                    taps.removeAll { $0 == tap }
                    await bridge.untap(tap)
                    continue
                }
            }
            take(drained, kind: tap.kind)
        }
        if let tap = taps.first(where: { $0.kind == .video }), frames?.wantsKeyframe() == true { await bridge.requestKeyframe(tap) }
        write(upTo: newest - Self.muxDelay)
    }

    /// Writes everything left, patches the file's header and closes it.
    func finish(bridge: any VideoMediaBridge) async {
        guard !ended else { return }
        ended = true
        for tap in taps { await bridge.untap(tap) }
        for frame in frames?.flush() ?? [] { add(frame) }
        write(upTo: .max)
        file?.close()
        stopOffset = startOffset + (file?.lastWritten ?? 0)
    }

    private func take(_ drained: ProducerTapPackets, kind: MediaKind) {
        if origin == nil, let first = drained.packets.first {
            origin = first.arrival
            startOffset = max(0, Int64((Date().timeIntervalSince(archiveStart) * 1_000).rounded()))
        }
        guard kind == .audio else {
            video.clockRate = drained.clockRate
            for frame in frames?.take(drained) ?? [] { add(frame) }
            return
        }
        audio.clockRate = drained.clockRate
        for p in drained.packets {
            let arrival = Int64(p.arrival &- min(p.arrival, origin!)) / 1_000_000
            enqueue(WebMFile.Frame(time: audio.time(p.timestamp, arrival: arrival), track: .audio, bytes: Array(drained.bytes[p.range]),
                                   keyframe: true))
        }
    }

    /// A VP8 frame (its key frame giving the size), or an H.264 unit once its configuration and picture size are
    /// known: from the first key frame carrying its parameter sets (the size by decoding that frame once; units
    /// before it are not written).
    private func add(_ assembled: VideoFrames.Frame) {
        switch assembled {
        case .vp8(let f):
            if f.frame.keyframe, videoSize == nil, let w = f.frame.width, let h = f.frame.height { videoSize = (w, h) }
            addVideo(f.frame.bytes, timestamp: f.frame.timestamp, keyframe: f.frame.keyframe, arrival: f.arrival)
        case .h264(let f):
            // A file already opened without it (no key frame in `headerWait`) keeps no video.
            if avcC == nil, file == nil, f.frame.keyframe, let config = f.frame.avcC, let picture = H264Decoder.picture(of: f.frame.bytes) {
                avcC = config
                videoSize = (picture.width, picture.height)
            }
            guard avcC != nil else { return }
            addVideo(f.frame.lengthPrefixed, timestamp: f.frame.timestamp, keyframe: f.frame.keyframe, arrival: f.arrival)
        }
    }

    private func addVideo(_ bytes: [UInt8], timestamp: UInt32, keyframe: Bool, arrival: UInt64) {
        let arrived = Int64(arrival &- min(arrival, origin ?? arrival)) / 1_000_000
        enqueue(WebMFile.Frame(time: video.time(timestamp, arrival: arrived), track: .video, bytes: bytes, keyframe: keyframe))
    }

    private func enqueue(_ frame: WebMFile.Frame) {
        newest = max(newest, frame.time)
        if let file { file.add(frame) } else { early.append(frame) }
    }

    /// Writes frames up to `time` (all of them at the end), opening the file at the first: once the video's size
    /// is known from its first key frame, or `headerWait` without one.
    private func write(upTo time: Int64) {
        if file == nil, openFailure == nil, !early.isEmpty {
            let videoTapped = taps.contains { $0.kind == .video }
            guard !videoTapped || videoSize != nil || time == .max || newest >= Self.headerWait else { return }
            // An H.264 stream has video in the file only once its configuration is known.
            let hasVideo: Bool
            if case .h264? = frames { hasVideo = avcC != nil } else { hasVideo = videoTapped }
            let hasAudio = taps.contains { $0.kind == .audio } || early.contains { $0.track == .audio }
            guard hasVideo || hasAudio else {
                early = []
                return
            }
            if hasVideo, avcC != nil { filename = name + ".mkv" }
            guard let opened = WebMFile(path: path, video: hasVideo ? videoSize ?? (640, 480) : nil, audio: hasAudio ? (48_000, 2) : nil,
                                        videoCodec: avcC.map { .h264(avcC: $0) } ?? .vp8) else {
                openFailure = "cannot create \(path)"
                return
            }
            for frame in early { opened.add(frame) }
            early = []
            file = opened
        }
        file?.write(upTo: time)
    }
}
