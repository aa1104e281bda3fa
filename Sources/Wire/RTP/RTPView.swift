/// The layout of an RTP packet in a receive buffer, found without allocating.
///
/// RFC 3550 §5.1 fixed header, RFC 8285 §4 extension block:
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |V=2|P|X|  CC   |M|     PT      |       sequence number         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                           timestamp                           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           synchronization source (SSRC) identifier            |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |            contributing source (CSRC) identifiers             |
/// |                             ....                              |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |   profile (0xBEDE / 0x100X)   |     length (32-bit words)     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        header extension                       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                            payload  ....                      |
/// |                               +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                               | padding ...   | padding count |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// One-byte elements (profile 0xBEDE) are `ID(4) L(4)` followed by L+1 bytes; two-byte
/// elements (0x100X) are `ID(8) L(8)` followed by L bytes. A zero byte is padding.
///
/// The view holds only offsets, so a forwarding path can read and rewrite fields in
/// place (`setSSRC`, `setSequenceNumber`, extension elements by id) and restore them.
public struct RTPView: Hashable, Sendable {
    public static let fixedHeaderLength = 12
    public static let oneByteProfile: UInt16 = 0xBEDE
    public static let twoByteProfile: UInt16 = 0x1000

    public let marker: Bool
    public let payloadType: UInt8
    public let csrcCount: Int
    /// Extension profile when the X bit is set.
    public let extensionProfile: UInt16?
    /// Offset of the first extension data byte (after the 4-byte extension header).
    public let extensionOffset: Int
    /// Extension data bytes (length field × 4).
    public let extensionLength: Int
    /// Fixed header + CSRCs + extension; also the payload offset.
    public let headerLength: Int
    public let payloadLength: Int
    /// Trailing padding including the count byte; 0 when P is clear.
    public let paddingLength: Int

    public var payloadOffset: Int { headerLength }
    public var payloadRange: Range<Int> { headerLength..<(headerLength + payloadLength) }

    /// Validates the header, CSRC list, extension block and padding of `bytes`.
    public init(_ bytes: UnsafeRawBufferPointer) throws(RTPError) {
        let count = bytes.count
        guard count >= RTPView.fixedHeaderLength else {
            throw .truncated(needed: RTPView.fixedHeaderLength, available: count)
        }
        let version = bytes[0] >> 6
        guard version == 2 else { throw .unsupportedVersion(version) }
        marker = bytes[1] & 0x80 != 0
        payloadType = bytes[1] & 0x7F
        csrcCount = Int(bytes[0] & 0x0F)
        var offset = RTPView.fixedHeaderLength + 4 * csrcCount
        guard count >= offset else { throw .truncated(needed: offset, available: count) }
        if bytes[0] & 0x10 != 0 {
            guard count >= offset + 4 else { throw .truncated(needed: offset + 4, available: count) }
            extensionProfile = PacketBytes.u16(bytes, offset)
            extensionLength = 4 * Int(PacketBytes.u16(bytes, offset + 2))
            extensionOffset = offset + 4
            offset += 4 + extensionLength
            guard count >= offset else { throw .truncated(needed: offset, available: count) }
        } else {
            extensionProfile = nil
            extensionOffset = offset
            extensionLength = 0
        }
        headerLength = offset
        if bytes[0] & 0x20 != 0 {
            let available = count - offset
            let padding = available > 0 ? Int(bytes[count - 1]) : 0
            guard padding >= 1, padding <= available else {
                throw .invalidPadding(length: padding, available: available)
            }
            paddingLength = padding
        } else {
            paddingLength = 0
        }
        payloadLength = count - headerLength - paddingLength
    }

    /// Validates and returns the layout of `bytes`.
    public static func parse(_ bytes: some ContiguousBytesView) throws(RTPError) -> RTPView {
        try PacketBytes.with(bytes) { (raw) throws(RTPError) in try RTPView(raw) }
    }

    // MARK: Fixed fields (the buffer must hold at least 12 bytes, as `init` checked).

    public static func sequenceNumber(in b: UnsafeRawBufferPointer) -> UInt16 {
        precondition(b.count >= fixedHeaderLength, "not an RTP buffer")
        return PacketBytes.u16(b, 2)
    }

    public static func timestamp(in b: UnsafeRawBufferPointer) -> UInt32 {
        precondition(b.count >= fixedHeaderLength, "not an RTP buffer")
        return PacketBytes.u32(b, 4)
    }

    public static func ssrc(in b: UnsafeRawBufferPointer) -> UInt32 {
        precondition(b.count >= fixedHeaderLength, "not an RTP buffer")
        return PacketBytes.u32(b, 8)
    }

    public static func setSequenceNumber(_ value: UInt16, in b: UnsafeMutableRawBufferPointer) {
        precondition(b.count >= fixedHeaderLength, "not an RTP buffer")
        PacketBytes.put16(b, 2, value)
    }

    public static func setTimestamp(_ value: UInt32, in b: UnsafeMutableRawBufferPointer) {
        precondition(b.count >= fixedHeaderLength, "not an RTP buffer")
        PacketBytes.put32(b, 4, value)
    }

    public static func setSSRC(_ value: UInt32, in b: UnsafeMutableRawBufferPointer) {
        precondition(b.count >= fixedHeaderLength, "not an RTP buffer")
        PacketBytes.put32(b, 8, value)
    }

    /// Rewrites the 7-bit payload type, keeping the marker bit.
    public static func setPayloadType(_ value: UInt8, in b: UnsafeMutableRawBufferPointer) {
        precondition(b.count >= fixedHeaderLength, "not an RTP buffer")
        b[1] = b[1] & 0x80 | value & 0x7F
    }

    public static func setMarker(_ value: Bool, in b: UnsafeMutableRawBufferPointer) {
        precondition(b.count >= fixedHeaderLength, "not an RTP buffer")
        b[1] = value ? b[1] | 0x80 : b[1] & 0x7F
    }

    // MARK: Header-extension elements

    /// True for the RFC 8285 one-byte form.
    public var hasOneByteExtensions: Bool { extensionProfile == RTPView.oneByteProfile }
    /// True for the RFC 8285 two-byte form (0x1000-0x100F, low 4 bits are app bits).
    public var hasTwoByteExtensions: Bool { (extensionProfile ?? 0) & 0xFFF0 == RTPView.twoByteProfile }

    /// Calls `body` with each element's id and value range until it returns false.
    /// Stops silently at the first malformed element (RFC 8285 §4.2: ignore the rest).
    public func forEachExtensionElement(
        in b: UnsafeRawBufferPointer, _ body: (_ id: UInt8, _ value: Range<Int>) -> Bool
    ) {
        let end = extensionOffset + extensionLength
        guard extensionProfile != nil, end <= b.count else { return }
        var o = extensionOffset
        if hasOneByteExtensions {
            while o < end {
                let id = b[o] >> 4
                if id == 0 { o += 1; continue }  // padding byte
                if id == 15 { return }  // reserved: stop processing
                let length = Int(b[o] & 0x0F) + 1
                guard o + 1 + length <= end else { return }
                if !body(id, (o + 1)..<(o + 1 + length)) { return }
                o += 1 + length
            }
        } else if hasTwoByteExtensions {
            while o < end {
                let id = b[o]
                if id == 0 { o += 1; continue }
                guard o + 2 <= end else { return }
                let length = Int(b[o + 1])
                guard o + 2 + length <= end else { return }
                if !body(id, (o + 2)..<(o + 2 + length)) { return }
                o += 2 + length
            }
        }
    }

    /// Byte range of the value of extension element `id`, if present.
    public func extensionElement(id: UInt8, in b: UnsafeRawBufferPointer) -> Range<Int>? {
        var found: Range<Int>?
        forEachExtensionElement(in: b) { elementID, range in
            if elementID == id { found = range; return false }
            return true
        }
        return found
    }

    /// RFC 6464 audio level: V bit and level in -dBov (0 loudest, 127 silence).
    public func audioLevel(id: UInt8, in b: UnsafeRawBufferPointer) -> (voiceActivity: Bool, level: UInt8)? {
        guard let r = extensionElement(id: id, in: b), r.count >= 1 else { return nil }
        return (b[r.lowerBound] & 0x80 != 0, b[r.lowerBound] & 0x7F)
    }

    /// Writes an RFC 6464 audio level into an existing element; false if absent.
    @discardableResult
    public func setAudioLevel(
        id: UInt8, voiceActivity: Bool, level: UInt8, in b: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard let r = extensionElement(id: id, in: UnsafeRawBufferPointer(b)), r.count >= 1 else { return false }
        b[r.lowerBound] = (voiceActivity ? 0x80 : 0) | min(level, 127)
        return true
    }

    /// abs-send-time: 24-bit 6.18 fixed-point seconds.
    public func absSendTime(id: UInt8, in b: UnsafeRawBufferPointer) -> UInt32? {
        guard let r = extensionElement(id: id, in: b), r.count >= 3 else { return nil }
        return PacketBytes.u24(b, r.lowerBound)
    }

    @discardableResult
    public func setAbsSendTime(id: UInt8, _ value: UInt32, in b: UnsafeMutableRawBufferPointer) -> Bool {
        guard let r = extensionElement(id: id, in: UnsafeRawBufferPointer(b)), r.count >= 3 else { return false }
        PacketBytes.put24(b, r.lowerBound, value & 0xFF_FFFF)
        return true
    }

    /// transport-wide-cc sequence number (draft-holmer-rmcat-transport-wide-cc-extensions-01 §2).
    public func transportSequenceNumber(id: UInt8, in b: UnsafeRawBufferPointer) -> UInt16? {
        guard let r = extensionElement(id: id, in: b), r.count >= 2 else { return nil }
        return PacketBytes.u16(b, r.lowerBound)
    }

    @discardableResult
    public func setTransportSequenceNumber(id: UInt8, _ value: UInt16, in b: UnsafeMutableRawBufferPointer) -> Bool {
        guard let r = extensionElement(id: id, in: UnsafeRawBufferPointer(b)), r.count >= 2 else { return false }
        PacketBytes.put16(b, r.lowerBound, value)
        return true
    }

    /// True when the MID element (RFC 8843 §15) equals `mid`, compared without allocating.
    public func midEquals(id: UInt8, _ mid: String, in b: UnsafeRawBufferPointer) -> Bool {
        guard let r = extensionElement(id: id, in: b) else { return false }
        var utf8 = mid.utf8.makeIterator()
        for i in r {
            guard let c = utf8.next(), c == b[i] else { return false }
        }
        return utf8.next() == nil
    }

    /// The MID (or RID) string element.
    public func mid(id: UInt8, in b: UnsafeRawBufferPointer) -> String? {
        guard let r = extensionElement(id: id, in: b) else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: b[r]), as: UTF8.self)
    }

    /// Overwrites the MID element when `mid` has exactly its length (in place, so the
    /// packet size cannot change); false otherwise.
    @discardableResult
    public func setMid(id: UInt8, _ mid: String, in b: UnsafeMutableRawBufferPointer) -> Bool {
        guard let r = extensionElement(id: id, in: UnsafeRawBufferPointer(b)), mid.utf8.count == r.count else {
            return false
        }
        var i = r.lowerBound
        for c in mid.utf8 { b[i] = c; i += 1 }
        return true
    }
}
