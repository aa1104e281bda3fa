/// Transport-wide congestion control feedback
/// (draft-holmer-rmcat-transport-wide-cc-extensions-01 §3.1, RTPFB FMT 15).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  FMT=15 |    PT=205     |           length              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                     SSRC of packet sender                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      SSRC of media source                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |      base sequence number     |      packet status count      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                 reference time                | fb pkt. count |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |          packet chunk         |         packet chunk          |
/// .                                                               .
/// |         packet chunk          |  recv delta   |  recv delta   |
/// .                                                               .
/// |           recv delta          |  recv delta   | zero padding  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Chunks: run length `0|S(2)|run(13)`, or status vector `1|0|14 × 1-bit` /
/// `1|1|7 × 2-bit`. Status 0 = not received, 1 = small delta (1 byte, 0-63.75 ms),
/// 2 = large or negative delta (2 bytes signed). Deltas are in 250 µs ticks; the
/// reference time is in 64 ms units.
public struct TransportFeedback: Hashable, Sendable {
    public enum Status: UInt8, Hashable, Sendable {
        case notReceived = 0
        case smallDelta = 1
        case largeDelta = 2
    }

    /// One reported packet; `delta` (250 µs ticks since the previous received packet,
    /// or since the reference time for the first) is 0 when not received.
    public struct PacketResult: Hashable, Sendable {
        public var status: Status
        public var delta: Int16
        public init(status: Status, delta: Int16 = 0) {
            self.status = status
            self.delta = delta
        }
        public static let notReceived = PacketResult(status: .notReceived)
        /// Picks the small or large form for `delta` ticks.
        public static func received(delta: Int16) -> PacketResult {
            PacketResult(status: (0...255).contains(delta) ? .smallDelta : .largeDelta, delta: delta)
        }
    }

    public static let deltaTickMicroseconds: Int64 = 250
    public static let referenceTimeMicroseconds: Int64 = 64_000

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    public var baseSequenceNumber: UInt16
    /// 24-bit reference time in 64 ms units (wraps; unwrap across reports if needed).
    public var referenceTime: UInt32
    public var feedbackPacketCount: UInt8
    /// One entry per sequence number starting at `baseSequenceNumber`.
    public var packets: [PacketResult]

    public init(
        senderSSRC: UInt32, mediaSSRC: UInt32, baseSequenceNumber: UInt16, referenceTime: UInt32,
        feedbackPacketCount: UInt8, packets: [PacketResult]
    ) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.baseSequenceNumber = baseSequenceNumber
        self.referenceTime = referenceTime & 0xFF_FFFF
        self.feedbackPacketCount = feedbackPacketCount
        self.packets = packets
    }

    /// Received packets with arrival times in microseconds on the sender's reference clock.
    public var arrivals: [(sequenceNumber: UInt16, arrivalMicroseconds: Int64)] {
        var time = Int64(referenceTime) * TransportFeedback.referenceTimeMicroseconds
        var out: [(UInt16, Int64)] = []
        for (index, packet) in packets.enumerated() where packet.status != .notReceived {
            time += Int64(packet.delta) * TransportFeedback.deltaTickMicroseconds
            out.append((baseSequenceNumber &+ UInt16(truncatingIfNeeded: index), time))
        }
        return out
    }

    init(body b: UnsafeRawBufferPointer) throws(RTCPError) {
        let type = RTCPPacketType.transportLayerFeedback
        try b.requireRTCP(16, type: type)
        senderSSRC = PacketBytes.u32(b, 0)
        mediaSSRC = PacketBytes.u32(b, 4)
        baseSequenceNumber = PacketBytes.u16(b, 8)
        let statusCount = Int(PacketBytes.u16(b, 10))
        referenceTime = PacketBytes.u24(b, 12)
        feedbackPacketCount = b[15]
        var symbols: [UInt8] = []
        symbols.reserveCapacity(statusCount)
        var o = 16
        while symbols.count < statusCount {
            try b.requireRTCP(o + 2, type: type)
            let chunk = PacketBytes.u16(b, o)
            o += 2
            if chunk & 0x8000 == 0 {
                let symbol = UInt8((chunk >> 13) & 0x3)
                let run = min(Int(chunk & 0x1FFF), statusCount - symbols.count)
                symbols.append(contentsOf: repeatElement(symbol, count: run))
            } else if chunk & 0x4000 == 0 {
                for i in 0..<14 where symbols.count < statusCount {
                    symbols.append(UInt8((chunk >> UInt16(13 - i)) & 0x1))
                }
            } else {
                for i in 0..<7 where symbols.count < statusCount {
                    symbols.append(UInt8((chunk >> UInt16(12 - 2 * i)) & 0x3))
                }
            }
        }
        var packets: [PacketResult] = []
        packets.reserveCapacity(statusCount)
        for symbol in symbols {
            switch symbol {
            case 0:
                packets.append(.notReceived)
            case 1:
                try b.requireRTCP(o + 1, type: type)
                packets.append(PacketResult(status: .smallDelta, delta: Int16(b[o])))
                o += 1
            case 2:
                try b.requireRTCP(o + 2, type: type)
                packets.append(PacketResult(status: .largeDelta, delta: Int16(bitPattern: PacketBytes.u16(b, o))))
                o += 2
            default:
                throw .malformed(packetType: type.rawValue, detail: "reserved packet status 3")
            }
        }
        self.packets = packets
    }

    func serializeBody(into out: inout [UInt8]) throws(RTCPError) {
        let type = RTCPPacketType.transportLayerFeedback.rawValue
        guard packets.count <= 0xFFFF else { throw .overflow(packetType: type, detail: "\(packets.count) statuses") }
        for packet in packets where packet.status == .smallDelta && !(0...255).contains(packet.delta) {
            throw .overflow(packetType: type, detail: "small delta \(packet.delta) outside 0...255")
        }
        PacketBytes.append32(&out, senderSSRC)
        PacketBytes.append32(&out, mediaSSRC)
        PacketBytes.append16(&out, baseSequenceNumber)
        PacketBytes.append16(&out, UInt16(packets.count))
        PacketBytes.append24(&out, referenceTime & 0xFF_FFFF)
        out.append(feedbackPacketCount)
        let symbols = packets.map(\.status.rawValue)
        var i = 0
        while i < symbols.count {
            var run = 1
            while i + run < symbols.count, symbols[i + run] == symbols[i], run < 0x1FFF { run += 1 }
            let remaining = symbols.count - i
            let oneBitSpan = min(14, remaining)
            if run >= 14 {
                PacketBytes.append16(&out, UInt16(symbols[i]) << 13 | UInt16(run))
                i += run
            } else if symbols[i..<(i + oneBitSpan)].allSatisfy({ $0 <= 1 }) && remaining >= 14 {
                var chunk: UInt16 = 0x8000
                for k in 0..<14 { chunk |= UInt16(symbols[i + k]) << UInt16(13 - k) }
                PacketBytes.append16(&out, chunk)
                i += 14
            } else if run >= 7 || remaining <= run {
                PacketBytes.append16(&out, UInt16(symbols[i]) << 13 | UInt16(run))
                i += run
            } else {
                var chunk: UInt16 = 0xC000
                for k in 0..<min(7, remaining) { chunk |= UInt16(symbols[i + k]) << UInt16(12 - 2 * k) }
                PacketBytes.append16(&out, chunk)
                i += min(7, remaining)
            }
        }
        for packet in packets {
            switch packet.status {
            case .notReceived: break
            case .smallDelta: out.append(UInt8(packet.delta))
            case .largeDelta: PacketBytes.append16(&out, UInt16(bitPattern: packet.delta))
            }
        }
    }
}

/// Accumulates arrivals into transport-wide CC feedback, the receive-side half of
/// the draft: feed (sequence, arrival time) as packets come in, then `build()`.
///
/// Time is an argument (microseconds on any monotonic clock); nothing is read here.
public struct TransportFeedbackBuilder: Sendable {
    public let senderSSRC: UInt32
    public let mediaSSRC: UInt32
    public let feedbackPacketCount: UInt8
    private var base: UInt16?
    private var lastSequence: UInt16 = 0
    private var referenceTime: Int64 = 0
    private var lastTime: Int64 = 0
    private var packets: [TransportFeedback.PacketResult] = []

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, feedbackPacketCount: UInt8) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.feedbackPacketCount = feedbackPacketCount
    }

    public var isEmpty: Bool { base == nil }
    public var packetCount: Int { packets.count }

    /// Adds a received packet. Returns false, changing nothing, when it cannot join this
    /// report (older than the last one, gap too large, or delta beyond ±8.19 s): send
    /// what was built and start a new builder.
    public mutating func add(sequenceNumber: UInt16, arrivalMicroseconds: Int64) -> Bool {
        guard base != nil else {
            base = sequenceNumber
            lastSequence = sequenceNumber
            referenceTime = arrivalMicroseconds >= 0
                ? arrivalMicroseconds / TransportFeedback.referenceTimeMicroseconds
                : (arrivalMicroseconds - TransportFeedback.referenceTimeMicroseconds + 1) / TransportFeedback.referenceTimeMicroseconds
            lastTime = referenceTime * TransportFeedback.referenceTimeMicroseconds
            return appendDelta(arrivalMicroseconds, gap: 0)
        }
        let gap = SequenceNumber(lastSequence).distance(to: SequenceNumber(sequenceNumber))
        guard gap > 0, packets.count + gap <= 0xFFFF else { return false }
        guard appendDelta(arrivalMicroseconds, gap: gap - 1) else { return false }
        lastSequence = sequenceNumber
        return true
    }

    private mutating func appendDelta(_ arrival: Int64, gap: Int) -> Bool {
        let elapsed = arrival - lastTime
        let ticks = elapsed >= 0
            ? (elapsed + TransportFeedback.deltaTickMicroseconds / 2) / TransportFeedback.deltaTickMicroseconds
            : -((-elapsed + TransportFeedback.deltaTickMicroseconds / 2) / TransportFeedback.deltaTickMicroseconds)
        guard let delta = Int16(exactly: ticks) else {
            if packets.isEmpty { base = nil }
            return false
        }
        packets.append(contentsOf: repeatElement(.notReceived, count: gap))
        packets.append(.received(delta: delta))
        // Advance by the rounded delta so rounding errors do not accumulate.
        lastTime += Int64(delta) * TransportFeedback.deltaTickMicroseconds
        return true
    }

    /// The feedback for everything added so far, or nil when nothing was added.
    public func build() -> TransportFeedback? {
        guard let base else { return nil }
        return TransportFeedback(
            senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, baseSequenceNumber: base,
            referenceTime: UInt32(truncatingIfNeeded: referenceTime) & 0xFF_FFFF,
            feedbackPacketCount: feedbackPacketCount, packets: packets)
    }
}
