/// Why an RSA key could not be loaded, generated or used.
public enum RSAKeyError: Error, Equatable, Sendable {
    /// No PEM block, an unknown label, an encrypted key, or DER that does not parse.
    case invalidPEM(String)
    /// The key parsed but is not RSA (for example EC).
    case notRSA
    /// RS256 requires a modulus of at least 2048 bits (RFC 7518 section 3.3).
    case keyTooSmall(bits: Int)
    case openSSL(String)
}
