/// The class bits of a STUN message type (RFC 8489 §5).
public enum STUNClass: UInt8, Sendable, CaseIterable {
    case request = 0b00
    case indication = 0b01
    case successResponse = 0b10
    case errorResponse = 0b11
}

/// A STUN method (RFC 8489 §18.2); kept open so TURN and unknown methods round-trip.
public struct STUNMethod: RawRepresentable, Hashable, Sendable {
    /// 12-bit method number.
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue & 0x0FFF }

    public static let binding = STUNMethod(rawValue: 0x001)
    public static let allocate = STUNMethod(rawValue: 0x003)
    public static let refresh = STUNMethod(rawValue: 0x004)
    public static let send = STUNMethod(rawValue: 0x006)
    public static let data = STUNMethod(rawValue: 0x007)
    public static let createPermission = STUNMethod(rawValue: 0x008)
    public static let channelBind = STUNMethod(rawValue: 0x009)
}

/// Method and class packed into the 14-bit message type field.
///
/// ```
///  0                 1
///  2  3  4 5 6 7 8 9 0 1 2 3 4 5
/// +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
/// |M |M |M|M|M|C|M|M|M|C|M|M|M|M|
/// |11|10|9|8|7|1|6|5|4|0|3|2|1|0|
/// +--+--+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct STUNMessageType: Hashable, Sendable {
    public var method: STUNMethod
    public var messageClass: STUNClass

    public init(method: STUNMethod, messageClass: STUNClass) {
        self.method = method
        self.messageClass = messageClass
    }

    public static let bindingRequest = STUNMessageType(method: .binding, messageClass: .request)
    public static let bindingSuccess = STUNMessageType(method: .binding, messageClass: .successResponse)
    public static let bindingError = STUNMessageType(method: .binding, messageClass: .errorResponse)
    public static let bindingIndication = STUNMessageType(method: .binding, messageClass: .indication)

    /// Unpacks the 14 low bits of the first header word.
    public init(rawValue: UInt16) {
        let m = rawValue & 0x000F | (rawValue & 0x00E0) >> 1 | (rawValue & 0x3E00) >> 2
        let c = (rawValue & 0x0010) >> 4 | (rawValue & 0x0100) >> 7
        self.init(method: STUNMethod(rawValue: m), messageClass: STUNClass(rawValue: UInt8(c)) ?? .request)
    }

    public var rawValue: UInt16 {
        let m = method.rawValue
        let c = UInt16(messageClass.rawValue)
        return m & 0x000F | (m & 0x0070) << 1 | (m & 0x0F80) << 2 | (c & 1) << 4 | (c & 2) << 7
    }
}

/// A STUN message (RFC 8489 §5, ICE usage RFC 8445 §7).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |0 0|     STUN Message Type     |         Message Length        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Magic Cookie                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                                                               |
/// |                     Transaction ID (96 bits)                  |
/// |                                                               |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                 Attributes (TLV, padded to 4 bytes)           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// Parsing records where MESSAGE-INTEGRITY and FINGERPRINT start so they can be
/// checked against the original bytes without re-encoding (see `STUNMessage+Integrity`).
public struct STUNMessage: Hashable, Sendable {
    /// 0x2112A442, fixed by RFC 8489 §5.
    public static let magicCookie: UInt32 = 0x2112_A442
    public static let headerLength = 20
    /// Bound on attributes per message; a 1500-byte datagram fits at most 375.
    public static let maxAttributes = 512

    public var type: STUNMessageType
    public var transactionID: STUNTransactionID
    public var attributes: [STUNAttribute]
    /// Byte offset of the MESSAGE-INTEGRITY attribute header in the parsed bytes.
    public var integrityOffset: Int?
    /// Byte offset of the FINGERPRINT attribute header in the parsed bytes.
    public var fingerprintOffset: Int?

    public init(type: STUNMessageType, transactionID: STUNTransactionID, attributes: [STUNAttribute] = []) {
        self.type = type
        self.transactionID = transactionID
        self.attributes = attributes
    }

    /// True when `bytes` looks like STUN: first two bits zero, length aligned, magic cookie present.
    public static func isSTUN(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= headerLength && bytes[0] & 0xC0 == 0 && PacketBytes.u32(bytes, 4) == magicCookie
            && Int(PacketBytes.u16(bytes, 2)) % 4 == 0
    }

    /// RFC 7983 §7: first byte 0-3 is STUN.
    public static func isSTUN(firstByte: UInt8) -> Bool { firstByte <= 3 }

    /// Parses one complete message; the datagram must hold exactly the declared length.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(STUNError) -> STUNMessage {
        guard bytes.count >= headerLength else {
            throw .truncated(needed: headerLength, available: bytes.count)
        }
        guard bytes[0] & 0xC0 == 0 else { throw .notSTUN(firstByte: bytes[0]) }
        let cookie = PacketBytes.u32(bytes, 4)
        guard cookie == magicCookie else { throw .badMagicCookie(cookie) }
        let length = Int(PacketBytes.u16(bytes, 2))
        guard length % 4 == 0 else { throw .unalignedLength(length) }
        guard headerLength + length == bytes.count else {
            throw .lengthMismatch(declared: length, available: bytes.count - headerLength)
        }
        let transactionID = STUNTransactionID(
            word0: PacketBytes.u32(bytes, 8), word1: PacketBytes.u32(bytes, 12), word2: PacketBytes.u32(bytes, 16))
        var message = STUNMessage(
            type: STUNMessageType(rawValue: PacketBytes.u16(bytes, 0)), transactionID: transactionID)
        var offset = headerLength
        while offset < bytes.count {
            guard bytes.count - offset >= 4 else { throw .truncated(needed: offset + 4, available: bytes.count) }
            let type = STUNAttributeType(PacketBytes.u16(bytes, offset))
            let valueLength = Int(PacketBytes.u16(bytes, offset + 2))
            let padded = (valueLength + 3) & ~3
            guard offset + 4 + padded <= bytes.count else {
                throw .attributeOverrun(type: type.rawValue, offset: offset, length: valueLength)
            }
            guard message.attributes.count < maxAttributes else { throw .tooManyAttributes(limit: maxAttributes) }
            if type == .messageIntegrity && message.integrityOffset == nil { message.integrityOffset = offset }
            if type == .fingerprint && message.fingerprintOffset == nil { message.fingerprintOffset = offset }
            let value = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 4 + valueLength)])
            message.attributes.append(STUNAttribute.decode(type: type, value: value, transactionID: transactionID))
            offset += 4 + padded
        }
        return message
    }

    /// Parses one complete message.
    public static func parse(_ bytes: some ContiguousBytesView) throws(STUNError) -> STUNMessage {
        try PacketBytes.with(bytes) { (raw) throws(STUNError) in try parse(raw) }
    }

    /// Encodes the attributes exactly as listed (stored MESSAGE-INTEGRITY and FINGERPRINT
    /// values are written verbatim). Padding bytes are `padding` (RFC 8489 says zero;
    /// RFC 5769 vectors use 0x20 to prove receivers ignore them).
    public func serialize(padding: UInt8 = 0) throws(STUNError) -> [UInt8] {
        var out = headerBytes()
        for attribute in attributes {
            try STUNMessage.append(attribute, transactionID: transactionID, padding: padding, to: &out)
        }
        STUNMessage.patchLength(&out, to: out.count - STUNMessage.headerLength)
        return out
    }

    /// First attribute of the given type.
    public func attribute(_ type: STUNAttributeType) -> STUNAttribute? {
        attributes.first { $0.type == type }
    }

    public var username: String? {
        for case .username(let name) in attributes { return name }
        return nil
    }

    public var xorMappedAddress: STUNAddress? {
        for case .xorMappedAddress(let address) in attributes { return address }
        return nil
    }

    public var mappedAddress: STUNAddress? {
        for case .mappedAddress(let address) in attributes { return address }
        return nil
    }

    public var priority: UInt32? {
        for case .priority(let value) in attributes { return value }
        return nil
    }

    public var errorCode: STUNErrorCode? {
        for case .errorCode(let value) in attributes { return value }
        return nil
    }

    public var useCandidate: Bool { attributes.contains(.useCandidate) }

    /// ICE role from ICE-CONTROLLING / ICE-CONTROLLED (RFC 8445 §7.1.3).
    public var iceRole: (controlling: Bool, tieBreaker: UInt64)? {
        for attribute in attributes {
            switch attribute {
            case .iceControlling(let t): return (true, t)
            case .iceControlled(let t): return (false, t)
            default: continue
            }
        }
        return nil
    }

    /// Comprehension-required attribute types this decoder does not know (RFC 8489 §7.3.1).
    public var unknownComprehensionRequired: [STUNAttributeType] {
        attributes.compactMap {
            if case .other(let type, _) = $0, type.isComprehensionRequired, !STUNMessage.knownTypes.contains(type) {
                return type
            }
            return nil
        }
    }

    static let knownTypes: Set<STUNAttributeType> = [
        .mappedAddress, .username, .messageIntegrity, .errorCode, .unknownAttributes, .realm, .nonce,
        .xorMappedAddress, .priority, .useCandidate,
    ]

    func headerBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        PacketBytes.append16(&out, type.rawValue)
        PacketBytes.append16(&out, 0)
        PacketBytes.append32(&out, STUNMessage.magicCookie)
        PacketBytes.append32(&out, transactionID.word0)
        PacketBytes.append32(&out, transactionID.word1)
        PacketBytes.append32(&out, transactionID.word2)
        return out
    }

    static func append(
        _ attribute: STUNAttribute, transactionID: STUNTransactionID, padding: UInt8, to out: inout [UInt8]
    ) throws(STUNError) {
        let start = out.count
        PacketBytes.append32(&out, attribute.type.rawValue.asHighHalf)
        attribute.encodeValue(into: &out, transactionID: transactionID)
        let length = out.count - start - 4
        guard length <= 0xFFFF else { throw .valueTooLong(type: attribute.type.rawValue, length: length) }
        PacketBytes.set16(&out, start + 2, UInt16(length))
        while out.count % 4 != 0 { out.append(padding) }
        guard out.count - headerLength <= 0xFFFF else { throw .valueTooLong(type: attribute.type.rawValue, length: length) }
    }

    static func patchLength(_ out: inout [UInt8], to length: Int) {
        PacketBytes.set16(&out, 2, UInt16(truncatingIfNeeded: length))
    }
}

extension UInt16 {
    /// This value in the upper half of a 32-bit word (type-then-zero-length TLV header).
    fileprivate var asHighHalf: UInt32 { UInt32(self) << 16 }
}
