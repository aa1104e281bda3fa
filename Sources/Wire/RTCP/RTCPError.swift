/// Why bytes are not a usable RTCP packet (RFC 3550 §6, RFC 4585 §6).
public enum RTCPError: Error, Equatable, Sendable {
    /// The buffer ends before a field or before the length the header declares.
    case truncated(needed: Int, available: Int)
    /// The version bits are not 2.
    case unsupportedVersion(UInt8)
    /// The padding count is zero or longer than the packet body.
    case invalidPadding(length: Int, available: Int)
    /// A known packet type whose body does not match its layout.
    case malformed(packetType: UInt8, detail: String)
    /// A value too large for its field when serializing (count > 31, body > 256 KiB, ...).
    case overflow(packetType: UInt8, detail: String)
}

/// RTCP packet type codes (RFC 3550 §12.1, RFC 4585 §6.1, RFC 3611).
public struct RTCPPacketType: RawRepresentable, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let senderReport = RTCPPacketType(rawValue: 200)
    public static let receiverReport = RTCPPacketType(rawValue: 201)
    public static let sourceDescription = RTCPPacketType(rawValue: 202)
    public static let goodbye = RTCPPacketType(rawValue: 203)
    public static let applicationDefined = RTCPPacketType(rawValue: 204)
    /// RTPFB: generic NACK (FMT 1), transport-wide CC (FMT 15).
    public static let transportLayerFeedback = RTCPPacketType(rawValue: 205)
    /// PSFB: PLI (FMT 1), FIR (FMT 4), application layer / REMB (FMT 15).
    public static let payloadSpecificFeedback = RTCPPacketType(rawValue: 206)
    public static let extendedReport = RTCPPacketType(rawValue: 207)
}

/// The common first word of every RTCP packet.
public struct RTCPHeader: Hashable, Sendable {
    public var padding: Bool
    /// Report count, source count or feedback message type (FMT), 5 bits.
    public var count: UInt8
    public var packetType: RTCPPacketType
    /// Whole packet size in bytes, header and padding included ((length field + 1) × 4).
    public var byteLength: Int
}

/// Walks the packets of a compound RTCP datagram without allocating (RFC 3550 §6.1).
///
/// Each step validates the version and that the declared length fits, then yields the
/// header and the byte range of the whole packet.
public struct RTCPCompoundIterator {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    public mutating func next() throws(RTCPError) -> (header: RTCPHeader, range: Range<Int>)? {
        guard offset < bytes.count else { return nil }
        guard bytes.count - offset >= 4 else { throw .truncated(needed: offset + 4, available: bytes.count) }
        let version = bytes[offset] >> 6
        guard version == 2 else { throw .unsupportedVersion(version) }
        let length = (Int(PacketBytes.u16(bytes, offset + 2)) + 1) * 4
        guard offset + length <= bytes.count else {
            throw .truncated(needed: offset + length, available: bytes.count)
        }
        let header = RTCPHeader(
            padding: bytes[offset] & 0x20 != 0, count: bytes[offset] & 0x1F,
            packetType: RTCPPacketType(rawValue: bytes[offset + 1]), byteLength: length)
        let range = offset..<(offset + length)
        offset += length
        return (header, range)
    }
}
