/// Picture loss indication (RFC 4585 §6.3.1): ask the sender for a key frame.
///
/// ```
/// |V=2|P|  FMT=1  |   PT=206      |          length=2             |
/// |                  SSRC of packet sender                        |
/// |                  SSRC of media source                         |
/// ```
public struct PictureLossIndication: Hashable, Sendable {
    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32

    public init(senderSSRC: UInt32, mediaSSRC: UInt32) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
    }

    init(body b: UnsafeRawBufferPointer) throws(RTCPError) {
        try b.requireRTCP(8, type: .payloadSpecificFeedback)
        senderSSRC = PacketBytes.u32(b, 0)
        mediaSSRC = PacketBytes.u32(b, 4)
    }

    func serializeBody(into out: inout [UInt8]) {
        PacketBytes.append32(&out, senderSSRC)
        PacketBytes.append32(&out, mediaSSRC)
    }
}

/// Full intra request (RFC 5104 §4.3.1): a key frame request with a command
/// sequence number per target, so repeats can be recognised.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|  FMT=4  |   PT=206      |          length               |
/// |                  SSRC of packet sender                        |
/// |             SSRC of media source (unused, 0)                  |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                              SSRC                             |  × n
/// | Seq nr.       |    Reserved                                   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct FullIntraRequest: Hashable, Sendable {
    public struct Entry: Hashable, Sendable {
        public var ssrc: UInt32
        public var sequenceNumber: UInt8
        public init(ssrc: UInt32, sequenceNumber: UInt8) {
            self.ssrc = ssrc
            self.sequenceNumber = sequenceNumber
        }
    }

    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    public var entries: [Entry]

    public init(senderSSRC: UInt32, mediaSSRC: UInt32 = 0, entries: [Entry]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.entries = entries
    }

    init(body b: UnsafeRawBufferPointer) throws(RTCPError) {
        try b.requireRTCP(8, type: .payloadSpecificFeedback)
        senderSSRC = PacketBytes.u32(b, 0)
        mediaSSRC = PacketBytes.u32(b, 4)
        entries = stride(from: 8, to: b.count - 7, by: 8).map {
            Entry(ssrc: PacketBytes.u32(b, $0), sequenceNumber: b[$0 + 4])
        }
    }

    func serializeBody(into out: inout [UInt8]) {
        PacketBytes.append32(&out, senderSSRC)
        PacketBytes.append32(&out, mediaSSRC)
        for entry in entries {
            PacketBytes.append32(&out, entry.ssrc)
            out.append(contentsOf: [entry.sequenceNumber, 0, 0, 0])
        }
    }
}

/// Receiver estimated maximum bitrate (draft-alvestrand-rmcat-remb-03), carried as
/// application-layer feedback (RFC 4585 §6.4, PSFB FMT 15).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P| FMT=15  |   PT=206      |             length            |
/// |                  SSRC of packet sender                        |
/// |                  SSRC of media source (0)                     |
/// |  Unique identifier 'R' 'E' 'M' 'B'                            |
/// |  Num SSRC     | BR Exp    |  BR Mantissa                      |
/// |   SSRC feedback                                               |  × Num SSRC
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Bitrate is mantissa (18 bits) × 2^exponent (6 bits) bits per second.
public struct ReceiverEstimatedMaxBitrate: Hashable, Sendable {
    public var senderSSRC: UInt32
    public var mediaSSRC: UInt32
    public var mantissa: UInt32
    public var exponent: UInt8
    public var ssrcs: [UInt32]

    /// Encodes `bitrate` with the smallest exponent that fits, truncating low bits.
    public init(senderSSRC: UInt32, bitrate: UInt64, ssrcs: [UInt32]) {
        var exponent: UInt8 = 0
        while bitrate >> UInt64(exponent) >= 1 << 18 { exponent += 1 }
        self.init(senderSSRC: senderSSRC, mediaSSRC: 0, mantissa: UInt32(bitrate >> UInt64(exponent)),
                  exponent: exponent, ssrcs: ssrcs)
    }

    public init(senderSSRC: UInt32, mediaSSRC: UInt32, mantissa: UInt32, exponent: UInt8, ssrcs: [UInt32]) {
        self.senderSSRC = senderSSRC
        self.mediaSSRC = mediaSSRC
        self.mantissa = mantissa & 0x3_FFFF
        self.exponent = exponent & 0x3F
        self.ssrcs = ssrcs
    }

    /// Bits per second, saturating at `UInt64.max` for absurd exponents.
    public var bitrate: UInt64 {
        let m = UInt64(mantissa)
        guard m != 0 else { return 0 }
        if exponent >= 46 || m.leadingZeroBitCount < Int(exponent) { return .max }
        return m << UInt64(exponent)
    }

    static func matches(_ packet: UnsafeRawBufferPointer) -> Bool {
        packet.count >= 16 && packet[12] == 0x52 && packet[13] == 0x45 && packet[14] == 0x4D && packet[15] == 0x42
    }

    init(body b: UnsafeRawBufferPointer) throws(RTCPError) {
        try b.requireRTCP(16, type: .payloadSpecificFeedback)
        senderSSRC = PacketBytes.u32(b, 0)
        mediaSSRC = PacketBytes.u32(b, 4)
        let count = Int(b[12])
        exponent = b[13] >> 2
        mantissa = PacketBytes.u24(b, 13) & 0x3_FFFF
        try b.requireRTCP(16 + 4 * count, type: .payloadSpecificFeedback)
        ssrcs = (0..<count).map { PacketBytes.u32(b, 16 + 4 * $0) }
    }

    func serializeBody(into out: inout [UInt8]) throws(RTCPError) {
        guard ssrcs.count <= 255 else {
            throw .overflow(packetType: RTCPPacketType.payloadSpecificFeedback.rawValue, detail: "\(ssrcs.count) SSRCs > 255")
        }
        PacketBytes.append32(&out, senderSSRC)
        PacketBytes.append32(&out, mediaSSRC)
        out.append(contentsOf: [0x52, 0x45, 0x4D, 0x42])
        out.append(UInt8(ssrcs.count))
        PacketBytes.append24(&out, UInt32(exponent & 0x3F) << 18 | mantissa & 0x3_FFFF)
        for ssrc in ssrcs { PacketBytes.append32(&out, ssrc) }
    }
}
