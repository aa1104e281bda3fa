/// Generic NACK (RFC 4585 §6.2.1): lost RTP sequence numbers as PID + bitmask pairs.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  FMT=1  |   PT=205      |          length               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of packet sender                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                  SSRC of media source                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |            PID                |             BLP               |  × n
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// BLP bit i (LSB first) reports PID + i + 1 lost as well.
public struct GenericNACK: Hashable, Sendable {
    public struct Pair: Hashable, Sendable {
        public var packetID: UInt16
        public var lostBitmask: UInt16
        public init(packetID: UInt16, lostBitmask: UInt16) {
            self.packetID = packetID
            self.lostBitmask = lostBitmask
        }
    }

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    public var pairs: [Pair]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, pairs: [Pair]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.pairs = pairs
    }

    /// Packs `lost` (in send order, wrap-aware) into as few PID/BLP pairs as possible.
    public init(senderSSRC: UInt32, mediaSSRC: UInt32, lost: [UInt16]) {
        var pairs: [Pair] = []
        for sequence in lost {
            if var last = pairs.last {
                let distance = SequenceNumber(last.packetID).distance(to: SequenceNumber(sequence))
                if distance == 0 { continue }
                if (1...16).contains(distance) {
                    last.lostBitmask |= 1 << UInt16(distance - 1)
                    pairs[pairs.count - 1] = last
                    continue
                }
            }
            pairs.append(Pair(packetID: sequence, lostBitmask: 0))
        }
        self.init(senderSSRC: senderSSRC, mediaSSRC: mediaSSRC, pairs: pairs)
    }

    /// Every sequence number reported lost, in packet order.
    public var lostSequenceNumbers: [UInt16] {
        var out: [UInt16] = []
        for pair in pairs {
            out.append(pair.packetID)
            for bit in 0..<16 where pair.lostBitmask & (1 << UInt16(bit)) != 0 {
                out.append(pair.packetID &+ UInt16(bit + 1))
            }
        }
        return out
    }

    init(body b: UnsafeRawBufferPointer) throws(RTCPError) {
        try b.requireRTCP(8, type: .transportLayerFeedback)
        senderSSRC = PacketBytes.u32(b, 0)
        mediaSSRC = PacketBytes.u32(b, 4)
        pairs = stride(from: 8, to: b.count - 3, by: 4).map {
            Pair(packetID: PacketBytes.u16(b, $0), lostBitmask: PacketBytes.u16(b, $0 + 2))
        }
    }

    func serializeBody(into out: inout [UInt8]) {
        PacketBytes.append32(&out, senderSSRC)
        PacketBytes.append32(&out, mediaSSRC)
        for pair in pairs {
            PacketBytes.append16(&out, pair.packetID)
            PacketBytes.append16(&out, pair.lostBitmask)
        }
    }
}
