/// One RTCP packet of a compound datagram (RFC 3550 §6.4-6.6, RFC 4585 §6, RFC 5104 §4.3.1).
///
/// Every packet starts with the same header:
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P| RC/FMT  |      PT       |   length (32-bit words - 1)   |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Packet types this codec does not model (APP, XR, other feedback formats) come back
/// as `.unknown` with their bytes so they can be forwarded or ignored, never an error.
/// Reduced-size RTCP (RFC 5506), a lone feedback packet, parses like any compound.
public enum RTCPPacket: Hashable, Sendable {
    case senderReport(SenderReport)
    case receiverReport(ReceiverReport)
    case sourceDescription(SourceDescription)
    case goodbye(Goodbye)
    case nack(GenericNACK)
    case transportFeedback(TransportFeedback)
    case pictureLossIndication(PictureLossIndication)
    case fullIntraRequest(FullIntraRequest)
    case remb(ReceiverEstimatedMaxBitrate)
    case unknown(RTCPUnknownPacket)

    /// Parses every packet of a compound (or reduced-size) datagram.
    public static func parseCompound(_ bytes: UnsafeRawBufferPointer) throws(RTCPError) -> [RTCPPacket] {
        var packets: [RTCPPacket] = []
        var iterator = RTCPCompoundIterator(bytes)
        while let (header, range) = try iterator.next() {
            packets.append(try parse(header: header, packet: UnsafeRawBufferPointer(rebasing: bytes[range])))
        }
        return packets
    }

    /// Parses every packet of a compound (or reduced-size) datagram.
    public static func parseCompound(_ bytes: some ContiguousBytesView) throws(RTCPError) -> [RTCPPacket] {
        try PacketBytes.with(bytes) { (raw) throws(RTCPError) in try parseCompound(raw) }
    }

    /// Decodes one packet whose header the iterator already validated.
    public static func parse(header: RTCPHeader, packet: UnsafeRawBufferPointer) throws(RTCPError) -> RTCPPacket {
        let type = header.packetType
        let fmt = header.count
        let isKnown: Bool = switch (type, fmt) {
        case (.senderReport, _), (.receiverReport, _), (.sourceDescription, _), (.goodbye, _): true
        case (.transportLayerFeedback, 1), (.transportLayerFeedback, 15): true
        case (.payloadSpecificFeedback, 1), (.payloadSpecificFeedback, 4): true
        case (.payloadSpecificFeedback, 15): ReceiverEstimatedMaxBitrate.matches(packet)
        default: false
        }
        guard isKnown else {
            return .unknown(RTCPUnknownPacket(
                packetType: type.rawValue, count: fmt, padding: header.padding,
                body: Array(UnsafeRawBufferPointer(rebasing: packet[4...]))))
        }
        var end = packet.count
        if header.padding {
            let available = packet.count - 4
            let padding = Int(packet[packet.count - 1])
            guard padding >= 1, padding <= available else { throw .invalidPadding(length: padding, available: available) }
            end -= padding
        }
        let body = UnsafeRawBufferPointer(rebasing: packet[4..<end])
        switch (type, fmt) {
        case (.senderReport, _): return .senderReport(try SenderReport(count: fmt, body: body))
        case (.receiverReport, _): return .receiverReport(try ReceiverReport(count: fmt, body: body))
        case (.sourceDescription, _): return .sourceDescription(try SourceDescription(count: fmt, body: body))
        case (.goodbye, _): return .goodbye(try Goodbye(count: fmt, body: body))
        case (.transportLayerFeedback, 1): return .nack(try GenericNACK(body: body))
        case (.transportLayerFeedback, _): return .transportFeedback(try TransportFeedback(body: body))
        case (.payloadSpecificFeedback, 1): return .pictureLossIndication(try PictureLossIndication(body: body))
        case (.payloadSpecificFeedback, 4): return .fullIntraRequest(try FullIntraRequest(body: body))
        default: return .remb(try ReceiverEstimatedMaxBitrate(body: body))
        }
    }

    /// Encodes a compound datagram.
    public static func serializeCompound(_ packets: [RTCPPacket]) throws(RTCPError) -> [UInt8] {
        var out: [UInt8] = []
        for packet in packets { try packet.serialize(into: &out) }
        return out
    }

    /// Encodes this packet alone.
    public func serialize() throws(RTCPError) -> [UInt8] {
        var out: [UInt8] = []
        try serialize(into: &out)
        return out
    }

    /// Appends this packet; a body that is not a multiple of four bytes gets RTCP padding.
    public func serialize(into out: inout [UInt8]) throws(RTCPError) {
        let start = out.count
        let type: RTCPPacketType
        var count: UInt8
        out.append(contentsOf: [0, 0, 0, 0])
        switch self {
        case .senderReport(let p): type = .senderReport; count = try p.serializeBody(into: &out)
        case .receiverReport(let p): type = .receiverReport; count = try p.serializeBody(into: &out)
        case .sourceDescription(let p): type = .sourceDescription; count = try p.serializeBody(into: &out)
        case .goodbye(let p): type = .goodbye; count = try p.serializeBody(into: &out)
        case .nack(let p): type = .transportLayerFeedback; count = 1; p.serializeBody(into: &out)
        case .transportFeedback(let p): type = .transportLayerFeedback; count = 15; try p.serializeBody(into: &out)
        case .pictureLossIndication(let p): type = .payloadSpecificFeedback; count = 1; p.serializeBody(into: &out)
        case .fullIntraRequest(let p): type = .payloadSpecificFeedback; count = 4; p.serializeBody(into: &out)
        case .remb(let p): type = .payloadSpecificFeedback; count = 15; try p.serializeBody(into: &out)
        case .unknown(let p):
            type = RTCPPacketType(rawValue: p.packetType)
            count = p.count & 0x1F
            out.append(contentsOf: p.body)
            if p.padding { out[start] |= 0x20 }
        }
        let unaligned = (out.count - start) % 4
        if unaligned != 0 {
            let padding = 4 - unaligned
            out.append(contentsOf: repeatElement(0, count: padding - 1))
            out.append(UInt8(padding))
            out[start] |= 0x20
        }
        let words = (out.count - start) / 4 - 1
        guard words <= 0xFFFF else { throw .overflow(packetType: type.rawValue, detail: "packet longer than 262144 bytes") }
        out[start] |= 0x80 | count & 0x1F
        out[start + 1] = type.rawValue
        PacketBytes.set16(&out, start + 2, UInt16(words))
    }
}

/// A packet type or feedback format this codec does not decode, kept verbatim.
public struct RTCPUnknownPacket: Hashable, Sendable {
    public var packetType: UInt8
    /// The 5-bit RC/SC/FMT field.
    public var count: UInt8
    public var padding: Bool
    /// Everything after the 4-byte header, padding included.
    public var body: [UInt8]

    public init(packetType: UInt8, count: UInt8, padding: Bool = false, body: [UInt8]) {
        self.packetType = packetType
        self.count = count
        self.padding = padding
        self.body = body
    }
}

/// Shared bounds checks for RTCP body decoders.
extension UnsafeRawBufferPointer {
    @inline(__always)
    func requireRTCP(_ needed: Int, type: RTCPPacketType) throws(RTCPError) {
        guard count >= needed else {
            throw .malformed(packetType: type.rawValue, detail: "need \(needed) bytes, have \(count)")
        }
    }
}
