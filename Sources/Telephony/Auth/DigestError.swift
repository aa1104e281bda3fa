/// Why a digest challenge or credentials could not be used.
public enum DigestError: Error, Hashable, Sendable {
    case notDigest
    case malformed(String)
    case missingParameter(String)
    case unsupportedAlgorithm(String)
    /// The challenge offers only qop values other than `auth`.
    case unsupportedQop(String)
}
