/// A copy of what a producer receives, for a recorder (an individual-stream archive): each accepted RTP
/// packet's payload with its sequence number, timestamp, marker and arrival time, in arrival order.
///
/// A ring of `capacity` slots of `maxPayload` bytes, allocated once; the packet path copies into it and the
/// control plane drains it (`drain`). When the drainer falls behind, the newest packets are dropped and
/// counted, never grown into. The drain puts packets back in order (`RTPReorderBuffer`), so retransmissions
/// that arrive late still land where they belong.
final class ProducerTap {
    let id: ProducerTapID
    let capacity: Int
    static let maxPayload = 1_500
    private var payloads: [UInt8]
    private var lengths: [Int]
    private var sequences: [UInt16]
    private var timestamps: [UInt32]
    private var markers: [Bool]
    private var arrivals: [UInt64]
    private var head = 0
    private var count = 0
    private(set) var dropped: UInt64 = 0

    init(id: ProducerTapID, capacity: Int) {
        self.id = id
        self.capacity = max(1, capacity)
        payloads = [UInt8](repeating: 0, count: self.capacity * Self.maxPayload)
        lengths = [Int](repeating: 0, count: self.capacity)
        sequences = [UInt16](repeating: 0, count: self.capacity)
        timestamps = [UInt32](repeating: 0, count: self.capacity)
        markers = [Bool](repeating: false, count: self.capacity)
        arrivals = [UInt64](repeating: 0, count: self.capacity)
    }

    /// One packet's payload, from the packet path: copied into the next free slot, or dropped when full.
    @inline(__always)
    func capture(_ payload: UnsafeRawPointer, length: Int, sequence: UInt16, timestamp: UInt32, marker: Bool, now: UInt64) {
        guard count < capacity, length <= Self.maxPayload else {
            dropped &+= 1
            return
        }
        let slot = (head + count) % capacity
        payloads.withUnsafeMutableBytes { dst in
            (dst.baseAddress! + slot * Self.maxPayload).copyMemory(from: payload, byteCount: length)
        }
        lengths[slot] = length
        sequences[slot] = sequence
        timestamps[slot] = timestamp
        markers[slot] = marker
        arrivals[slot] = now
        count += 1
    }

    /// Everything captured since the last drain, oldest first (a control-plane command: it allocates).
    func drain(codec: String, clockRate: Int) -> ProducerTapPackets {
        var out = ProducerTapPackets(codec: codec, clockRate: clockRate, packets: [], bytes: [], dropped: dropped)
        out.packets.reserveCapacity(count)
        for i in 0..<count {
            let slot = (head + i) % capacity
            let start = out.bytes.count
            out.bytes.append(contentsOf: payloads[slot * Self.maxPayload ..< slot * Self.maxPayload + lengths[slot]])
            out.packets.append(ProducerTapPackets.Packet(sequence: sequences[slot], timestamp: timestamps[slot], marker: markers[slot],
                                                         arrival: arrivals[slot], range: start..<out.bytes.count))
        }
        head = (head + count) % capacity
        count = 0
        return out
    }
}

/// A tap on a producer; chosen by the caller.
public struct ProducerTapID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ value: String) { rawValue = value }
    public var description: String { rawValue }
}

/// What a producer tap captured since it was last drained, in arrival order.
public struct ProducerTapPackets: Sendable, Hashable {
    public struct Packet: Sendable, Hashable {
        public var sequence: UInt16
        public var timestamp: UInt32
        public var marker: Bool
        /// Arrival time on the worker's monotonic clock, in nanoseconds.
        public var arrival: UInt64
        /// Where the payload is in `bytes`.
        public var range: Range<Int>
    }

    /// The producer's codec name (`opus`, `VP8`, `H264`) and RTP clock rate.
    public var codec: String
    public var clockRate: Int
    public var packets: [Packet]
    public var bytes: [UInt8]
    /// Packets lost because the ring was full (the drainer fell behind), since the tap began.
    public var dropped: UInt64
}
