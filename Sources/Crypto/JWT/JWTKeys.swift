import Wire

extension JWT {
    /// The JWS algorithms we produce and accept (RFC 7518 section 3.1).
    public enum Algorithm: String, Sendable, CaseIterable {
        case rs256 = "RS256"
        case hs256 = "HS256"
    }

    /// A key that signs tokens; the algorithm follows from the key type.
    public enum SigningKey: Sendable {
        case rs256(RSAPrivateKey)
        case hs256([UInt8])

        public var algorithm: Algorithm {
            switch self {
            case .rs256: .rs256
            case .hs256: .hs256
            }
        }
    }

    /// A key that verifies tokens. The token's `alg` must equal the key's algorithm, so an
    /// HS256 token can never be checked with an RSA public key used as an HMAC secret.
    public enum VerificationKey: Sendable {
        case rs256(RSAPublicKey)
        case hs256([UInt8])

        public var algorithm: Algorithm {
            switch self {
            case .rs256: .rs256
            case .hs256: .hs256
            }
        }
    }

    /// A token split into its parts, signature not yet checked.
    public struct Decoded: Sendable {
        public var header: [String: JSONValue]
        public var claims: [String: JSONValue]
        /// `base64url(header) "." base64url(payload)`, the bytes the signature covers (RFC 7515 section 5.1).
        public var signingInput: [UInt8]
        public var signature: [UInt8]

        public var algorithm: String? { header["alg"]?.stringValue }
    }
}
