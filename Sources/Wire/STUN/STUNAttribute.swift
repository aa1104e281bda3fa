/// A STUN attribute type code (RFC 8489 §18.3, RFC 8445 §16.1).
///
/// Codes below 0x8000 are comprehension-required: an agent that does not understand
/// one must reject the request with 420 and list it in UNKNOWN-ATTRIBUTES.
public struct STUNAttributeType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let mappedAddress = STUNAttributeType(0x0001)
    public static let username = STUNAttributeType(0x0006)
    public static let messageIntegrity = STUNAttributeType(0x0008)
    public static let errorCode = STUNAttributeType(0x0009)
    public static let unknownAttributes = STUNAttributeType(0x000A)
    public static let realm = STUNAttributeType(0x0014)
    public static let nonce = STUNAttributeType(0x0015)
    public static let xorMappedAddress = STUNAttributeType(0x0020)
    public static let priority = STUNAttributeType(0x0024)
    public static let useCandidate = STUNAttributeType(0x0025)
    public static let software = STUNAttributeType(0x8022)
    public static let fingerprint = STUNAttributeType(0x8028)
    public static let iceControlled = STUNAttributeType(0x8029)
    public static let iceControlling = STUNAttributeType(0x802A)

    /// True for codes 0x0000-0x7FFF (RFC 8489 §14).
    public var isComprehensionRequired: Bool { rawValue < 0x8000 }

    public var description: String { "0x" + String(rawValue, radix: 16) }
}

/// An ERROR-CODE value (RFC 8489 §14.8): a three-digit code and a reason phrase.
public struct STUNErrorCode: Hashable, Sendable {
    /// 300-699; the class is `code / 100` and the number `code % 100`.
    public var code: Int
    public var reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    public static let tryAlternate = STUNErrorCode(code: 300, reason: "Try Alternate")
    public static let badRequest = STUNErrorCode(code: 400, reason: "Bad Request")
    public static let unauthorized = STUNErrorCode(code: 401, reason: "Unauthorized")
    public static let unknownAttribute = STUNErrorCode(code: 420, reason: "Unknown Attribute")
    public static let staleNonce = STUNErrorCode(code: 438, reason: "Stale Nonce")
    /// ICE role conflict (RFC 8445 §7.3.1.1).
    public static let roleConflict = STUNErrorCode(code: 487, reason: "Role Conflict")
    public static let serverError = STUNErrorCode(code: 500, reason: "Server Error")
}

/// One decoded STUN attribute (RFC 8489 §14).
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |         Type                  |            Length             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         Value (variable)                ....
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// A value that does not decode cleanly (bad family, invalid UTF-8, wrong size) is kept
/// as `.other` with its raw bytes, so re-encoding never changes what a peer sent.
public enum STUNAttribute: Hashable, Sendable {
    case mappedAddress(STUNAddress)
    /// Decoded (already un-XORed) address.
    case xorMappedAddress(STUNAddress)
    case username(String)
    /// The 20-byte HMAC-SHA1 as received, or a placeholder before signing.
    case messageIntegrity([UInt8])
    case fingerprint(UInt32)
    case errorCode(STUNErrorCode)
    case unknownAttributes([STUNAttributeType])
    case software(String)
    case realm(String)
    case nonce(String)
    case priority(UInt32)
    case useCandidate
    case iceControlling(tieBreaker: UInt64)
    case iceControlled(tieBreaker: UInt64)
    case other(type: STUNAttributeType, value: [UInt8])

    /// The type code written on the wire.
    public var type: STUNAttributeType {
        switch self {
        case .mappedAddress: .mappedAddress
        case .xorMappedAddress: .xorMappedAddress
        case .username: .username
        case .messageIntegrity: .messageIntegrity
        case .fingerprint: .fingerprint
        case .errorCode: .errorCode
        case .unknownAttributes: .unknownAttributes
        case .software: .software
        case .realm: .realm
        case .nonce: .nonce
        case .priority: .priority
        case .useCandidate: .useCandidate
        case .iceControlling: .iceControlling
        case .iceControlled: .iceControlled
        case .other(let type, _): type
        }
    }

    /// Decodes one attribute value; `transactionID` is needed to undo the XOR.
    static func decode(
        type: STUNAttributeType, value v: UnsafeRawBufferPointer, transactionID: STUNTransactionID
    ) -> STUNAttribute {
        func text() -> String? { String(validating: v, as: UTF8.self) }
        let raw = STUNAttribute.other(type: type, value: Array(v))
        switch type {
        case .mappedAddress, .xorMappedAddress:
            guard let address = decodeAddress(v, xor: type == .xorMappedAddress, transactionID) else { return raw }
            return type == .mappedAddress ? .mappedAddress(address) : .xorMappedAddress(address)
        case .username:
            return text().map(STUNAttribute.username) ?? raw
        case .software:
            return text().map(STUNAttribute.software) ?? raw
        case .realm:
            return text().map(STUNAttribute.realm) ?? raw
        case .nonce:
            return text().map(STUNAttribute.nonce) ?? raw
        case .messageIntegrity:
            return v.count == 20 ? .messageIntegrity(Array(v)) : raw
        case .fingerprint:
            return v.count == 4 ? .fingerprint(PacketBytes.u32(v, 0)) : raw
        case .priority:
            return v.count == 4 ? .priority(PacketBytes.u32(v, 0)) : raw
        case .useCandidate:
            return v.isEmpty ? .useCandidate : raw
        case .iceControlling:
            return v.count == 8 ? .iceControlling(tieBreaker: PacketBytes.u64(v, 0)) : raw
        case .iceControlled:
            return v.count == 8 ? .iceControlled(tieBreaker: PacketBytes.u64(v, 0)) : raw
        case .errorCode:
            // Reserved bits must be zero and the number 0-99 so re-encoding is exact.
            guard v.count >= 4, v[0] == 0, v[1] == 0, v[2] & 0xF8 == 0, (3...6).contains(v[2]), v[3] < 100,
                  let reason = String(validating: UnsafeRawBufferPointer(rebasing: v[4...]), as: UTF8.self)
            else { return raw }
            return .errorCode(STUNErrorCode(code: Int(v[2]) * 100 + Int(v[3]), reason: reason))
        case .unknownAttributes:
            guard v.count % 2 == 0 else { return raw }
            return .unknownAttributes(stride(from: 0, to: v.count, by: 2).map {
                STUNAttributeType(PacketBytes.u16(v, $0))
            })
        default:
            return raw
        }
    }

    /// Appends the value bytes (without header or padding).
    func encodeValue(into out: inout [UInt8], transactionID: STUNTransactionID) {
        switch self {
        case .mappedAddress(let a): STUNAttribute.encodeAddress(a, xor: false, transactionID, into: &out)
        case .xorMappedAddress(let a): STUNAttribute.encodeAddress(a, xor: true, transactionID, into: &out)
        case .username(let s), .software(let s), .realm(let s), .nonce(let s): out.append(contentsOf: s.utf8)
        case .messageIntegrity(let mac): out.append(contentsOf: mac)
        case .fingerprint(let crc): PacketBytes.append32(&out, crc)
        case .priority(let p): PacketBytes.append32(&out, p)
        case .useCandidate: break
        case .iceControlling(let t), .iceControlled(let t): PacketBytes.append64(&out, t)
        case .errorCode(let e):
            let code = min(max(e.code, 300), 699)
            out.append(contentsOf: [0, 0, UInt8(code / 100), UInt8(code % 100)])
            out.append(contentsOf: e.reason.utf8)
        case .unknownAttributes(let types): for t in types { PacketBytes.append16(&out, t.rawValue) }
        case .other(_, let value): out.append(contentsOf: value)
        }
    }

    static func decodeAddress(
        _ v: UnsafeRawBufferPointer, xor: Bool, _ transactionID: STUNTransactionID
    ) -> STUNAddress? {
        guard v.count >= 4, v[0] == 0, let family = STUNAddress.Family(rawValue: v[1]) else { return nil }
        let xorPort: UInt16 = xor ? UInt16(STUNMessage.magicCookie >> 16) : 0
        let port = PacketBytes.u16(v, 2) ^ xorPort
        switch family {
        case .ipv4:
            guard v.count == 8 else { return nil }
            let mask = xor ? STUNMessage.magicCookie : 0
            return .ipv4(PacketBytes.u32(v, 4) ^ mask, port: port)
        case .ipv6:
            guard v.count == 20 else { return nil }
            let (maskHigh, maskLow) = xor ? transactionID.xorMask : (0, 0)
            return .ipv6(high: PacketBytes.u64(v, 4) ^ maskHigh, low: PacketBytes.u64(v, 12) ^ maskLow, port: port)
        }
    }

    static func encodeAddress(
        _ a: STUNAddress, xor: Bool, _ transactionID: STUNTransactionID, into out: inout [UInt8]
    ) {
        out.append(0)
        out.append(a.family.rawValue)
        PacketBytes.append16(&out, a.port ^ (xor ? UInt16(STUNMessage.magicCookie >> 16) : 0))
        switch a.family {
        case .ipv4:
            PacketBytes.append32(&out, UInt32(truncatingIfNeeded: a.low) ^ (xor ? STUNMessage.magicCookie : 0))
        case .ipv6:
            let (maskHigh, maskLow) = xor ? transactionID.xorMask : (0, 0)
            PacketBytes.append64(&out, a.high ^ maskHigh)
            PacketBytes.append64(&out, a.low ^ maskLow)
        }
    }
}
