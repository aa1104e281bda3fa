/// Why a datagram is not a well-formed STUN message (RFC 8489 §6).
public enum STUNError: Error, Equatable, Sendable {
    /// The buffer ends before a field that must be present.
    case truncated(needed: Int, available: Int)
    /// The two most significant bits of the first byte are not zero (RFC 8489 §5).
    case notSTUN(firstByte: UInt8)
    /// The magic cookie is not 0x2112A442, so this is a classic RFC 3489 message or not STUN.
    case badMagicCookie(UInt32)
    /// The header length is not a multiple of four (RFC 8489 §5).
    case unalignedLength(Int)
    /// The header length disagrees with the datagram size (trailing bytes are forbidden).
    case lengthMismatch(declared: Int, available: Int)
    /// An attribute's length runs past the end of the message.
    case attributeOverrun(type: UInt16, offset: Int, length: Int)
    /// More attributes than `STUNMessage.maxAttributes`, to keep hostile input bounded.
    case tooManyAttributes(limit: Int)
    /// A value cannot be encoded (for example a string longer than 65535 bytes).
    case valueTooLong(type: UInt16, length: Int)
}
