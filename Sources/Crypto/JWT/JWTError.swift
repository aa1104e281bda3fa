/// Why a JSON Web Token was refused or could not be made.
public enum JWTError: Error, Equatable, Sendable {
    /// Not three base64url parts, a header or payload that is not a JSON object, a claim of the wrong type.
    case malformed(String)
    /// `alg` is `none`, unknown, or does not match the verification key's algorithm.
    case unsupportedAlgorithm(String)
    case badSignature
    /// `exp` plus leeway is in the past (RFC 7519 section 4.1.4).
    case expired
    /// `nbf` or `iat` minus leeway is in the future (RFC 7519 sections 4.1.5, 4.1.6).
    case notYetValid
    /// `exp` is further from `iat` than the caller allows.
    case lifetimeTooLong
    case missingClaim(String)
    /// Signing failed inside the crypto library, or claims could not be encoded.
    case signingFailed(String)
}
