import COpenSSL

/// An RSA private key for RS256 signing (RFC 7518 section 3.3).
// @unchecked Sendable: the EVP_PKEY is never mutated after init; OpenSSL 3 allows concurrent
// read-only use of one EVP_PKEY as long as each operation has its own EVP_MD_CTX, which `sign` creates.
public final class RSAPrivateKey: @unchecked Sendable {
    let pkey: OpaquePointer

    /// Minimum modulus size accepted anywhere (RFC 7518 section 3.3).
    public static let minimumBits = 2048

    private init(owning pkey: OpaquePointer) {
        self.pkey = pkey
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Generates a fresh key pair with public exponent 65537.
    public static func generate(bits: Int = 2048) throws(RSAKeyError) -> RSAPrivateKey {
        guard bits >= minimumBits else { throw .keyTooSmall(bits: bits) }
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else { throw .openSSL(OpenSSLError.drain()) }
        defer { EVP_PKEY_CTX_free(ctx) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(ctx) == 1,
              EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, Int32(bits)) == 1,
              EVP_PKEY_generate(ctx, &key) == 1,
              let key
        else { throw .openSSL(OpenSSLError.drain()) }
        return RSAPrivateKey(owning: key)
    }

    /// Loads a PEM private key: PKCS#8 (`BEGIN PRIVATE KEY`) or PKCS#1 (`BEGIN RSA PRIVATE KEY`).
    /// Encrypted keys are refused.
    public convenience init(pem: String) throws(RSAKeyError) {
        guard let block = PEMBlock.parse(pem) else { throw .invalidPEM("no unencrypted PEM block") }
        let parsed: OpaquePointer?
        switch block.label {
        case "PRIVATE KEY", "RSA PRIVATE KEY":
            // d2i_AutoPrivateKey recognises both PrivateKeyInfo and the bare PKCS#1 structure.
            parsed = block.der.withUnsafeBufferPointer { buf -> OpaquePointer? in
                var p: UnsafePointer<UInt8>? = buf.baseAddress
                return d2i_AutoPrivateKey(nil, &p, buf.count)
            }
        default:
            throw .invalidPEM("unexpected PEM label \(block.label)")
        }
        guard let parsed else { throw .invalidPEM(OpenSSLError.drain()) }
        try self.init(checking: parsed)
    }

    private convenience init(checking pkey: OpaquePointer) throws(RSAKeyError) {
        self.init(owning: try RSAKeyError.checkedRSA(pkey))
    }

    public var bits: Int { Int(EVP_PKEY_get_bits(pkey)) }

    /// PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form Vonage hands out.
    public var pemPKCS8: String {
        let der = MemoryBIO.collect { bio in i2d_PKCS8PrivateKey_bio(bio, pkey, nil, nil, 0, nil, nil) == 1 }
        // Serialising a key we already hold only fails on allocation failure.
        guard let der else { preconditionFailure("PKCS#8 export failed: \(OpenSSLError.drain())") }
        return PEMBlock.encode(label: "PRIVATE KEY", der: der)
    }

    /// The matching public key, as an independent object without private parts.
    public var publicKey: RSAPublicKey {
        let der = MemoryBIO.collect { bio in i2d_PUBKEY_bio(bio, pkey) == 1 }
        guard let der, let key = try? RSAPublicKey(spkiDER: der) else {
            preconditionFailure("public key export failed: \(OpenSSLError.drain())")
        }
        return key
    }

    /// RSASSA-PKCS1-v1_5 with SHA-256 over `message` (the JWS "RS256" signature).
    public func sign(sha256 message: [UInt8]) throws(RSAKeyError) -> [UInt8] {
        guard let md = EVP_MD_CTX_new() else { throw .openSSL(OpenSSLError.drain()) }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestSignInit(md, nil, EVP_sha256(), nil, pkey) == 1 else { throw .openSSL(OpenSSLError.drain()) }
        var length = 0
        let ok = message.withUnsafeBufferPointer { m -> Bool in
            guard EVP_DigestSign(md, nil, &length, m.baseAddress, m.count) == 1 else { return false }
            return true
        }
        guard ok else { throw .openSSL(OpenSSLError.drain()) }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = message.withUnsafeBufferPointer { m in
            signature.withUnsafeMutableBufferPointer { s in
                EVP_DigestSign(md, s.baseAddress, &length, m.baseAddress, m.count)
            }
        }
        guard signed == 1 else { throw .openSSL(OpenSSLError.drain()) }
        return Array(signature.prefix(length))
    }

    public func sign(sha256 message: some Sequence<UInt8>) throws(RSAKeyError) -> [UInt8] {
        try sign(sha256: Array(message))
    }
}
