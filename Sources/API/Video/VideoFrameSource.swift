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

typealias VP8FrameSource = VideoFrameSource<VP8FrameAssembler>

extension VideoFrameSource where Assembler == VP8FrameAssembler {
    init(maxWait: UInt64) { self.init(VP8FrameAssembler(), maxWait: maxWait) }

    static func isVP8(_ drained: ProducerTapPackets) -> Bool { drained.codec.uppercased() == "VP8" }
}
