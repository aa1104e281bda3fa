import Foundation
import Live
import Media
import Wire

/// One stream of an individual-stream archive, written to a WebM file as it arrives: its Opus packets one
/// per block, its VP8 packets put back in order (`RTPReorderBuffer`, waiting for retransmissions) and
/// assembled into frames (`VP8FrameAssembler`, starting at a key frame and skipping to the next one after a
/// loss), both tracks on one timeline (each packet's arrival for its track's first, RTP time after it) and
/// written in time order half a second behind the newest frame. An H.264 stream's video is not recorded
/// (WebM carries VP8); its audio is.
///
/// Owned by one archive's recording task; not shared.
final class StreamRecorder {
    let streamID: String
    let connectionData: String
    let filename: String
    /// Milliseconds from the archive's start to this file's first frame (0 until it has one).
    private(set) var startOffset: Int64 = 0
    private(set) var stopOffset: Int64 = 0
    private(set) var size = 0
    private(set) var failure: String?
    private(set) var ended = false

    let path: String
    private let archiveStart: Date
    private var taps: [StreamTap]
    private var origin: UInt64?
    private var audio = TrackClock()
    private var video = TrackClock()
    private var videoOrder = RTPReorderBuffer<Packet>(capacity: 1_024, maxWait: 300_000_000)
    private var assembler = VP8FrameAssembler()
    private var videoSize: (width: Int, height: Int)?
    private var lastKeyframeRequest: UInt64 = 0
    /// Frames not yet written: in time order, written once the newest is `muxDelay` ms later.
    private var pending: [Frame] = []
    private var newest: Int64 = 0
    private var writer: WebMWriter?
    private var tracks: Set<WebMWriter.Track> = []
    private var file: FileHandle?
    private var lastWritten: Int64 = 0

    static let muxDelay: Int64 = 500
    /// Audio frames held while the video's first key frame is awaited, before the header is written without it.
    static let headerWait: Int64 = 3_000

    struct Packet {
        var payload: [UInt8]
        var timestamp: UInt32
        var marker: Bool
        var arrival: UInt64
    }

    struct Frame {
        var time: Int64
        var track: WebMWriter.Track
        var bytes: [UInt8]
        var keyframe: Bool
    }

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

    init(streamID: String, connectionData: String, directory: String, taps: [StreamTap], archiveStart: Date) {
        self.streamID = streamID
        self.connectionData = connectionData
        self.taps = taps
        self.archiveStart = archiveStart
        filename = streamID + ".webm"
        path = directory + "/" + filename
    }

    var hasFile: Bool { writer != nil }

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
        for (tap, drained) in packets { take(drained, kind: tap.kind) }
        // Waiting for a key frame (the first, or the next after a loss that retransmissions did not fill): ask again each second.
        if assembler.needsKeyframe, let tap = taps.first(where: { $0.kind == .video }),
           let now = packets.first(where: { $0.0.kind == .video })?.1.packets.last?.arrival, now &- lastKeyframeRequest > 1_000_000_000 {
            lastKeyframeRequest = now
            await bridge.requestKeyframe(tap)
        }
        write(upTo: newest - Self.muxDelay)
    }

    /// Writes everything left, patches the file's header and closes it.
    func finish(bridge: any VideoMediaBridge) async {
        guard !ended else { return }
        ended = true
        for tap in taps { await bridge.untap(tap) }
        for (_, packet, gap) in videoOrder.flush() { assemble(packet, gapBefore: gap) }
        write(upTo: .max)
        if let writer, let file {
            do {
                for patch in writer.finish() {
                    try file.seek(toOffset: UInt64(patch.offset))
                    try file.write(contentsOf: patch.bytes)
                }
            } catch {
                failure = "writing \(filename): \(error)"
            }
        }
        try? file?.close()
        file = nil
        stopOffset = startOffset + lastWritten
    }

    private func take(_ drained: ProducerTapPackets, kind: MediaKind) {
        if kind == .video, drained.codec.uppercased() != "VP8" {
            // Not recordable in WebM: stop taking it (the file keeps the audio).
            taps.removeAll { $0.kind == .video }
            return
        }
        for p in drained.packets {
            if origin == nil {
                origin = p.arrival
                startOffset = max(0, Int64((Date().timeIntervalSince(archiveStart) * 1_000).rounded()))
            }
            let arrival = Int64(p.arrival &- min(p.arrival, origin!)) / 1_000_000
            let payload = Array(drained.bytes[p.range])
            switch kind {
            case .audio:
                audio.clockRate = drained.clockRate
                enqueue(Frame(time: audio.time(p.timestamp, arrival: arrival), track: .audio, bytes: payload, keyframe: true))
            case .video:
                video.clockRate = drained.clockRate
                _ = videoOrder.insert(sequence: p.sequence, arrival: p.arrival,
                                      Packet(payload: payload, timestamp: p.timestamp, marker: p.marker, arrival: p.arrival))
                while let (_, packet, gap) = videoOrder.pop(now: p.arrival) { assemble(packet, gapBefore: gap) }
            }
        }
    }

    private func assemble(_ packet: Packet, gapBefore: Bool) {
        let frame = packet.payload.withUnsafeBytes {
            assembler.push(timestamp: packet.timestamp, marker: packet.marker, gapBefore: gapBefore, payload: $0)
        }
        guard let frame else { return }
        if frame.keyframe, videoSize == nil, let w = frame.width, let h = frame.height { videoSize = (w, h) }
        let arrival = Int64(packet.arrival &- min(packet.arrival, origin ?? packet.arrival)) / 1_000_000
        enqueue(Frame(time: video.time(frame.timestamp, arrival: arrival), track: .video, bytes: frame.bytes, keyframe: frame.keyframe))
    }

    private func enqueue(_ frame: Frame) {
        newest = max(newest, frame.time)
        var i = pending.count
        while i > 0, pending[i - 1].time > frame.time { i -= 1 }
        pending.insert(frame, at: i)
    }

    /// Writes pending frames up to `time` (all of them at the end), opening the file at the first: once the
    /// video's size is known from its first key frame, or `headerWait` without one.
    private func write(upTo time: Int64) {
        guard failure == nil, !pending.isEmpty else { return }
        if writer == nil {
            let hasVideo = taps.contains { $0.kind == .video }
            guard !hasVideo || videoSize != nil || time == .max || newest >= Self.headerWait else { return }
            open(video: hasVideo ? videoSize ?? (640, 480) : nil, audio: taps.contains { $0.kind == .audio } || pending.contains { $0.track == .audio })
        }
        guard var writer, let file else { return }
        var count = 0
        var out: [UInt8] = []
        for frame in pending {
            guard frame.time <= time else { break }
            count += 1
            guard tracks.contains(frame.track) else { continue }
            out += writer.frame(frame.bytes, track: frame.track, time: frame.time, keyframe: frame.keyframe)
            lastWritten = frame.time
        }
        pending.removeFirst(count)
        self.writer = writer
        do {
            try file.write(contentsOf: out)
            size += out.count
        } catch {
            failure = "writing \(filename): \(error)"
        }
    }

    private func open(video: (width: Int, height: Int)?, audio: Bool) {
        guard video != nil || audio else { return }
        var writer = WebMWriter(video: video, audio: audio ? (48_000, 2) : nil, muxingApp: "switchboard")
        let header = writer.header()
        guard FileManager.default.createFile(atPath: path, contents: Data(header)), let file = FileHandle(forWritingAtPath: path) else {
            failure = "cannot create \(path)"
            return
        }
        do { try file.seekToEnd() } catch { failure = "cannot write \(path)" }
        size = header.count
        tracks = Set((video != nil ? [WebMWriter.Track.video] : []) + (audio ? [.audio] : []))
        self.writer = writer
        self.file = file
    }
}
