/// Why bytes are not a usable RTP packet (RFC 3550 §5.1, RFC 8285).
public enum RTPError: Error, Equatable, Sendable {
    /// The buffer ends before a field that must be present.
    case truncated(needed: Int, available: Int)
    /// The version bits are not 2.
    case unsupportedVersion(UInt8)
    /// The padding count is zero or larger than what follows the header (RFC 3550 §5.1).
    case invalidPadding(length: Int, available: Int)
    /// A header-extension element overruns its block, or cannot be encoded in its form
    /// (one-byte: id 1-14 and 1-16 bytes; two-byte: id 1-255 and 0-255 bytes).
    case invalidExtensionElement(id: UInt8, length: Int)
    /// Header-extension data longer than the 16-bit word count can describe.
    case headerExtensionTooLong(Int)
    /// More than 15 CSRCs, which the 4-bit CC field cannot express.
    case tooManyCSRCs(Int)
    /// Padding longer than 255 bytes, which the one-byte count cannot express.
    case paddingTooLong(Int)
}
