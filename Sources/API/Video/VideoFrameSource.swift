import Media
import Wire

/// A published stream's video frames from its producer tap's packets: put back in order (`RTPReorderBuffer`,
/// waiting up to `maxWait` for retransmissions, then skipping) and assembled (`VP8FrameAssembler` or
/// `H264FrameAssembler`: from a key frame; a gap drops its frame and waits for the next key frame). Shared by
/// the archives that record video.
struct VideoFrameSource<Assembler: RTPFrameAssembler> {
    struct Frame {
        var frame: Assembler.Frame
        /// The arrival of the packet that completed it (the worker's monotonic clock, ns).
        var arrival: UInt64
    }

    private struct Packet {
        var payload: [UInt8]
        var timestamp: UInt32
        var marker: Bool
        var arrival: UInt64
    }

    private var order: RTPReorderBuffer<Packet>
    private var assembler: Assembler
    private var lastKeyframeRequest: UInt64 = 0
    /// The newest arrival seen.
    private(set) var now: UInt64 = 0

    /// `maxWait` in nanoseconds: how long a gap may wait for its retransmission.
    init(_ assembler: Assembler, maxWait: UInt64) {
        self.assembler = assembler
        // The first packets may come out of order too: the key frame asked for as the tap began, retransmitted.
        order = RTPReorderBuffer(capacity: 1_024, maxWait: maxWait, startWait: maxWait)
    }

    /// The frames a drain completes, in order.
    mutating func take(_ drained: ProducerTapPackets) -> [Frame] {
        var frames: [Frame] = []
        for p in drained.packets {
            now = max(now, p.arrival)
            _ = order.insert(sequence: p.sequence, arrival: p.arrival,
                             Packet(payload: Array(drained.bytes[p.range]), timestamp: p.timestamp, marker: p.marker, arrival: p.arrival))
            while let (_, packet, gap) = order.pop(now: p.arrival) { assemble(packet, gap, into: &frames) }
        }
        return frames
    }

    /// Everything still held (at the end of a recording).
    mutating func flush() -> [Frame] {
        var frames: [Frame] = []
        for (_, packet, gap) in order.flush() { assemble(packet, gap, into: &frames) }
        return frames
    }

    /// Whether to ask the publisher for a key frame now: while waiting for one (the first, or the next after a
    /// loss that retransmissions did not fill, or after a frame the decoder refused), once a second.
    mutating func wantsKeyframe(force: Bool = false) -> Bool {
        if force { assembler.waitForKeyframe() }
        guard assembler.needsKeyframe, now > 0, now &- lastKeyframeRequest > 1_000_000_000 else { return false }
        lastKeyframeRequest = now
        return true
    }

    private mutating func assemble(_ packet: Packet, _ gap: Bool, into frames: inout [Frame]) {
        let frame = packet.payload.withUnsafeBytes { assembler.push(timestamp: packet.timestamp, marker: packet.marker, gapBefore: gap, payload: $0) }
        if let frame { frames.append(Frame(frame: frame, arrival: packet.arrival)) }
    }
}

/// A stream's video frames in whichever codec its tap names: VP8 or H.264 (nil for another). Shared by the
/// archives that record video.
enum VideoFrames {
    case vp8(VideoFrameSource<VP8FrameAssembler>)
    case h264(VideoFrameSource<H264FrameAssembler>)

    enum Frame {
        case vp8(VideoFrameSource<VP8FrameAssembler>.Frame)
        case h264(VideoFrameSource<H264FrameAssembler>.Frame)

        /// As a decoder takes it (an H.264 unit in Annex B).
        var bytes: [UInt8] {
            switch self {
            case .vp8(let f): f.frame.bytes
            case .h264(let f): f.frame.bytes
            }
        }
    }

    init?(codec: String, maxWait: UInt64) {
        switch codec.uppercased() {
        case "VP8": self = .vp8(VideoFrameSource(VP8FrameAssembler(), maxWait: maxWait))
        case "H264": self = .h264(VideoFrameSource(H264FrameAssembler(), maxWait: maxWait))
        default: return nil
        }
    }

    mutating func take(_ drained: ProducerTapPackets) -> [Frame] {
        switch self {
        case .vp8(var source):
            defer { self = .vp8(source) }
            return source.take(drained).map(Frame.vp8)
        case .h264(var source):
            defer { self = .h264(source) }
            return source.take(drained).map(Frame.h264)
        }
    }

    mutating func flush() -> [Frame] {
        switch self {
        case .vp8(var source):
            defer { self = .vp8(source) }
            return source.flush().map(Frame.vp8)
        case .h264(var source):
            defer { self = .h264(source) }
            return source.flush().map(Frame.h264)
        }
    }

    mutating func wantsKeyframe(force: Bool = false) -> Bool {
        switch self {
        case .vp8(var source):
            defer { self = .vp8(source) }
            return source.wantsKeyframe(force: force)
        case .h264(var source):
            defer { self = .h264(source) }
            return source.wantsKeyframe(force: force)
        }
    }
}
