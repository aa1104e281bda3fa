import Audio
import Foundation
import Live
import Media
import VideoCodec
import Wire

/// How a composed archive or broadcast lays its streams out: a predefined layout, and the one to use instead
/// while a stream shares a screen (the Video API's `screenshareType`, with `bestFit` only); or a custom one, a
/// stylesheet placing the streams by their layout classes (`LayoutStylesheet`).
struct ArchiveLayout: Sendable, Equatable {
    var kind: CompositeLayout.Kind = .bestFit
    var screenshare: CompositeLayout.Kind?
    var stylesheet: LayoutStylesheet?

    /// Where each picture goes on a `width` × `height` canvas, in drawing order, and whether it covers its box
    /// (else it fits inside). Pictures come in the order their streams were published. Predefined layouts, as
    /// the Video API's: best fit keeps that order (a screen share first when `screenshare` applies); `pip`
    /// puts the stream whose layout classes hold `full` in the full-size place, the presentations the one that
    /// holds `focus` in the large one.
    func place(_ pictures: [(stream: VideoHub.Stream, picture: I420Image)], width: Int, height: Int) -> [(I420Image, I420Image.Rect, cover: Bool)] {
        if let stylesheet {
            let elements = pictures.map { LayoutStylesheet.Element(classes: Set($0.stream.layoutClassList), width: $0.picture.width, height: $0.picture.height) }
            return stylesheet.place(elements, width: width, height: height).map { p in
                (pictures[p.index].picture, I420Image.Rect(x: p.x, y: p.y, width: p.width, height: p.height), p.cover)
            }
        }
        let sharing = kind == .bestFit && screenshare != nil && pictures.contains { $0.stream.videoType == .screen }
        let big = kind == .pip ? "full" : "focus"
        let ordered = pictures.enumerated().sorted { a, b in
            func rank(_ s: VideoHub.Stream) -> Int {
                if sharing { return s.videoType == .screen ? 0 : 1 }
                return kind != .bestFit && s.layoutClassList.contains(big) ? 0 : 1
            }
            return (rank(a.element.stream), a.offset) < (rank(b.element.stream), b.offset)
        }
        let layout = sharing ? screenshare! : kind
        return zip(ordered, CompositeLayout.rects(layout, count: ordered.count, width: width, height: height)).map { ($0.element.picture, $1, false) }
    }
}

/// A composed archive's picture: one of the Video API's resolutions (landscape or portrait), encoded at a
/// bitrate for its size — 1 Mb/s up to 640 × 480, 2.5 Mb/s up to 1280 × 720, 4.5 Mb/s above — or at most the
/// archive's `maxBitrate`, or at a constant quantizer (the archive's `quantizationParameter`) instead.
struct ArchiveCanvas: Sendable, Equatable {
    var width: Int
    var height: Int
    /// kb/s.
    var bitrate: Int
    var quantizer: Int?

    static let resolutions = ["640x480", "480x640", "1280x720", "720x1280", "1920x1080", "1080x1920"]
    /// The Video API's bounds on `maxBitrate`, in b/s.
    static let maxBitrates = 100_000...6_000_000
    /// The Video API's bounds on `quantizationParameter`.
    static let quantizers = 15...40
    static let standard = ArchiveCanvas(resolution: "640x480")!

    /// Nil for a resolution that is not one of `resolutions`.
    init?(resolution: String, maxBitrate: Int? = nil, quantizer: Int? = nil) {
        guard Self.resolutions.contains(resolution) else { return nil }
        let sides = resolution.split(separator: "x").compactMap { Int($0) }
        width = sides[0]
        height = sides[1]
        let pixels = width * height
        let natural = pixels <= 640 * 480 ? 1_000 : pixels <= 1280 * 720 ? 2_500 : 4_500
        bitrate = min(natural, (maxBitrate ?? .max) / 1_000)
        self.quantizer = quantizer
    }

    var resolution: String { "\(width)x\(height)" }
}

/// A composed archive, an MP4 file as the Video API's are (`MediaWriter`: H.264 and AAC), or a broadcast (the
/// same to an HLS playlist and RTMP servers, `VideoBroadcasts`): the session's audio
/// mix (held for the archive by `VideoArchives`) and, with video, every stream's video decoded (`VP8Decoder`,
/// `H264Decoder`), laid out on one canvas (`ArchiveCanvas`: 640 × 480 unless another resolution is asked for)
/// in one of the Video API's predefined layouts (`CompositeLayout`) or a custom one (`LayoutStylesheet`), as
/// `ArchiveLayout` places them (it can change while recording) and encoded again, 15
/// pictures a second, a key frame every 2 s. A stream's picture is its newest decoded frame; one that has none
/// yet (or an audio-only stream, or one whose video the archive does not record: `selection`) takes no cell.
///
/// The decoding, drawing and encoding are CPU work — 0.12 to 0.17 of a core for 1 to 4 streams of 640 × 480
/// on a 2-core VM, 1.2 to 1.8 times what the encoders alone cost (`scripts/bench-archive`, docs/benchmarks.md
/// "Video archives"); they run in the recording's own task, not on a media worker.
enum ComposedArchive {
    static let frameRate = 15

    private final class Stream {
        let id: String
        var taps: [StreamTap]
        /// By the codec its first packets name: VP8 or H.264 frames, and their decoder.
        private var frames: VideoFrames?
        private var decoder: (any PictureDecoder)?
        var picture: I420Image?

        /// A picture shows as it arrives, so a gap waits less for its retransmission than in a file of its own.
        static let maxWait: UInt64 = 300_000_000

        init(id: String, taps: [StreamTap]) {
            self.id = id
            self.taps = taps
        }

        /// Decodes what a drain completes into `picture`; false for a codec not decoded here. True also when the
        /// decoder refused a frame, with `refused` set (a key frame is then asked for).
        func take(_ drained: ProducerTapPackets, refused: inout Bool) -> Bool {
            if frames == nil {
                frames = VideoFrames(codec: drained.codec, maxWait: Self.maxWait)
                switch frames {
                case .vp8?: decoder = try? VP8Decoder()
                case .h264?: decoder = try? H264Decoder()
                case nil: break
                }
            }
            guard let decoder, frames != nil else { return false }
            for frame in frames!.take(drained) {
                if let decoded = decoder.decode(frame.bytes) { picture = decoded } else { refused = true }
            }
            return true
        }

        func wantsKeyframe(force: Bool) -> Bool { frames?.wantsKeyframe(force: force) ?? false }
    }

    /// Records until `shouldStop`, as `holder` to the media engine: with a `canvas`, the streams laid out on it 15
    /// times a second, and with a `mix`, the session's sound, to `outputs` (whose statuses go to `watch` as they
    /// change); the MP4 file among them, or why the recording failed.
    static func record(holder: String, sessionID: String, outputs: [MediaWriter.Output], hub: VideoHub, engine: MediaEngine, canvas: ArchiveCanvas?, mix: HeldMix?,
                       selection: @Sendable () -> StreamSelection, layout: @Sendable () -> ArchiveLayout,
                       watch: @Sendable ([MediaWriter.OutputStatus]) -> Void = { _ in }, paused: (@Sendable (Bool) -> Void)? = nil,
                       shouldStop: @Sendable (ArchiveProgress) -> Bool) async -> ArchiveRecorder.Outcome {
        let path = outputs.lazy.compactMap { if case .mp4(let path) = $0 { path } else { nil } }.first ?? ""
        let clock = ContinuousClock()
        let origin = clock.now
        var outcome = ArchiveRecorder.Outcome(file: path, size: 0, duration: 0, failure: nil)
        let tap = MixerTapID(holder)
        let file: MediaWriter
        do {
            file = try MediaWriter(outputs, video: canvas.map {
                MediaWriter.Video(width: $0.width, height: $0.height, frameRate: frameRate, bitrate: $0.bitrate, keyframeInterval: 2 * frameRate,
                              quantizer: $0.quantizer)
            }, audio: mix != nil)
            if let mix { try await engine.addMixerTap(mix.mixer, tap, participant: mix.listener, frames: 250) }
        } catch {
            outcome.failure = "\(error)"
            return outcome
        }

        var streams: [String: Stream] = [:]
        /// Streams whose video is neither VP8 nor H.264: heard in the mix, not shown, and not tapped again.
        var undecodable: Set<String> = []
        var videoFrames: Int64 = 0
        var statuses: [MediaWriter.OutputStatus] = []
        var pause = ArchivePause(origin: origin, report: paused)
        // Until stopped, or until a file cannot be written (the recording then ends, failed).
        while !shouldStop(pause.progress(since: origin, at: clock.now)), file.failure == nil {
            let now = file.statuses
            if now != statuses {
                statuses = now
                watch(now)
            }
            let published = hub.streams(sessionID: sessionID)
            if pause.update(publishing: !published.isEmpty, now: clock.now) {
                // Nothing recorded: the mix heard meanwhile is let go.
                if let mix { _ = try? await engine.drainMixerTap(mix.mixer, tap) }
                try? await Task.sleep(for: .milliseconds(1_000 / frameRate))
                continue
            }
            if let canvas {
                let chosen = selection()
                let live = published.filter { chosen.kinds($0.id).contains(.video) }
                await decode(live, of: sessionID, into: &streams, undecodable: &undecodable, hub: hub, tap: ProducerTapID(holder))
                // The pictures due by now (at most a few when late: a picture repeats rather than piles up).
                let due = Int64(pause.recorded(since: origin, at: clock.now) / .milliseconds(1)) * Int64(frameRate) / 1_000
                if due - videoFrames > 3 { videoFrames = due - 3 }
                while videoFrames <= due {
                    var image = I420Image(width: canvas.width, height: canvas.height)
                    let published = live.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
                    let pictures = published.compactMap { s in streams[s.id]?.picture.map { (stream: s, picture: $0) } }
                    for (picture, rect, cover) in layout().place(pictures, width: canvas.width, height: canvas.height) {
                        if cover { image.draw(picture, covering: rect) } else { image.draw(picture, fitting: rect) }
                    }
                    file.add(image, index: videoFrames)
                    videoFrames += 1
                }
            }
            // Sound: the mix as it came.
            if let mix, let drained = try? await engine.drainMixerTap(mix.mixer, tap) { file.add(samples: drained.samples) }
            try? await Task.sleep(for: .milliseconds(1_000 / frameRate))
        }
        for stream in streams.values { for tap in stream.taps { await hub.bridge.untap(tap) } }
        if let mix {
            if let drained = try? await engine.drainMixerTap(mix.mixer, tap) { file.add(samples: drained.samples) }
            try? await engine.removeMixerTap(mix.mixer, tap)
        }
        file.close()
        watch(file.statuses)
        outcome.failure = file.failure
        outcome.size = ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
        outcome.duration = Int((pause.recorded(since: origin, at: clock.now) / .milliseconds(1) / 1_000).rounded())
        return outcome
    }

    /// Takes each shown stream's newest picture: taps streams newly shown (up to `CompositeLayout.maxPictures`),
    /// decodes what their taps caught, lets go of those gone or no longer shown, and of any in a codec not decoded
    /// here (neither VP8 nor H.264).
    private static func decode(_ live: [VideoHub.Stream], of sessionID: String, into streams: inout [String: Stream], undecodable: inout Set<String>,
                               hub: VideoHub, tap: ProducerTapID) async {
        for s in live where streams[s.id] == nil && !undecodable.contains(s.id) && s.hasVideo && streams.count < CompositeLayout.maxPictures {
            guard let taps = try? await hub.bridge.tapStream(sessionID: sessionID, streamID: s.id, tap: tap, kinds: [.video]),
                  !taps.isEmpty else { continue }
            streams[s.id] = Stream(id: s.id, taps: taps)
        }
        let ids = Set(live.map(\.id))
        for stream in Array(streams.values) {
            let drained: ProducerTapPackets?
            if ids.contains(stream.id), let tap = stream.taps.first { drained = try? await hub.bridge.drain(tap) } else { drained = nil }
            var refused = false
            guard let drained, let tap = stream.taps.first, stream.take(drained, refused: &refused) else {
                // Gone, or in a codec not decoded here (then not tapped again).
                if drained != nil { undecodable.insert(stream.id) }
                for tap in stream.taps { await hub.bridge.untap(tap) }
                streams[stream.id] = nil
                continue
            }
            if stream.wantsKeyframe(force: refused) { await hub.bridge.requestKeyframe(tap) }
        }
    }
}
