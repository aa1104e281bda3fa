import COpenSSL
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

extension RSAKeyError {
    /// Returns `pkey` if it is an RSA key of at least `RSAPrivateKey.minimumBits`; otherwise frees it and
    /// throws. Shared by the private and public key loaders.
    static func checkedRSA(_ pkey: OpaquePointer) throws(RSAKeyError) -> OpaquePointer {
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA else {
            EVP_PKEY_free(pkey)
            throw .notRSA
        }
        let bits = Int(EVP_PKEY_get_bits(pkey))
        guard bits >= RSAPrivateKey.minimumBits else {
            EVP_PKEY_free(pkey)
            throw .keyTooSmall(bits: bits)
        }
        return pkey
    }
}
