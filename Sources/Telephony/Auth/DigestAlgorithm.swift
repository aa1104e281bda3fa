import Crypto
import Wire

/// Digest hash algorithms for SIP (RFC 8760: MD5 from RFC 2617, SHA-256 from RFC 7616).
public enum DigestAlgorithm: String, Hashable, Sendable, CaseIterable {
    case md5 = "MD5"
    case sha256 = "SHA-256"

    public init?(name: String) {
        switch name.uppercased() {
        case "MD5": self = .md5
        case "SHA-256": self = .sha256
        default: return nil
        }
    }

    /// Lower-case hex of the hash of `text`.
    public func hex(_ text: String) -> String {
        switch self {
        case .md5: Hex.encode(MD5.hash(text))
        case .sha256: Hex.encode(SHA256.hash(text))
        }
    }
}
