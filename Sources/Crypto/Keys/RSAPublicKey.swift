import COpenSSL

/// An RSA public key for RS256 verification (RFC 7518 section 3.3).
// @unchecked Sendable: the EVP_PKEY is never mutated after init; OpenSSL 3 allows concurrent
// read-only use of one EVP_PKEY as long as each operation has its own EVP_MD_CTX, which `verify` creates.
public final class RSAPublicKey: @unchecked Sendable {
    let pkey: OpaquePointer

    private init(owning pkey: OpaquePointer) {
        self.pkey = pkey
    }

    deinit { EVP_PKEY_free(pkey) }

    /// Loads a PEM public key: SubjectPublicKeyInfo (`BEGIN PUBLIC KEY`) or PKCS#1
    /// (`BEGIN RSA PUBLIC KEY`).
    public convenience init(pem: String) throws(RSAKeyError) {
        guard let block = PEMBlock.parse(pem) else { throw .invalidPEM("no PEM block") }
        switch block.label {
        case "PUBLIC KEY":
            try self.init(spkiDER: block.der)
        case "RSA PUBLIC KEY":
            let parsed = block.der.withUnsafeBufferPointer { buf -> OpaquePointer? in
                var p: UnsafePointer<UInt8>? = buf.baseAddress
                return d2i_PublicKey(EVP_PKEY_RSA, nil, &p, buf.count)
            }
            guard let parsed else { throw .invalidPEM(OpenSSLError.drain()) }
            try self.init(checking: parsed)
        default:
            throw .invalidPEM("unexpected PEM label \(block.label)")
        }
    }

    /// Loads DER SubjectPublicKeyInfo (RFC 5280 section 4.1.2.7).
    public convenience init(spkiDER der: [UInt8]) throws(RSAKeyError) {
        let parsed = der.withUnsafeBufferPointer { buf -> OpaquePointer? in
            var p: UnsafePointer<UInt8>? = buf.baseAddress
            return d2i_PUBKEY(nil, &p, buf.count)
        }
        guard let parsed else { throw .invalidPEM(OpenSSLError.drain()) }
        try self.init(checking: parsed)
    }

    private convenience init(checking pkey: OpaquePointer) throws(RSAKeyError) {
        guard EVP_PKEY_get_base_id(pkey) == EVP_PKEY_RSA else {
            EVP_PKEY_free(pkey)
            throw .notRSA
        }
        let bits = Int(EVP_PKEY_get_bits(pkey))
        guard bits >= RSAPrivateKey.minimumBits else {
            EVP_PKEY_free(pkey)
            throw .keyTooSmall(bits: bits)
        }
        self.init(owning: pkey)
    }

    public var bits: Int { Int(EVP_PKEY_get_bits(pkey)) }

    /// DER SubjectPublicKeyInfo.
    public var spkiDER: [UInt8] {
        guard let der = MemoryBIO.collect({ bio in i2d_PUBKEY_bio(bio, pkey) == 1 }) else {
            preconditionFailure("public key export failed: \(OpenSSLError.drain())")
        }
        return der
    }

    /// SubjectPublicKeyInfo PEM (`-----BEGIN PUBLIC KEY-----`).
    public var pem: String { PEMBlock.encode(label: "PUBLIC KEY", der: spkiDER) }

    /// Checks an RSASSA-PKCS1-v1_5 SHA-256 signature; any failure, including a
    /// malformed signature, is just `false`.
    public func verify(signature: [UInt8], sha256 message: [UInt8]) -> Bool {
        guard let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestVerifyInit(md, nil, EVP_sha256(), nil, pkey) == 1 else {
            _ = OpenSSLError.drain()
            return false
        }
        let result = signature.withUnsafeBufferPointer { s in
            message.withUnsafeBufferPointer { m in
                EVP_DigestVerify(md, s.baseAddress, s.count, m.baseAddress, m.count)
            }
        }
        if result != 1 { ERR_clear_error() }
        return result == 1
    }

    public func verify(signature: some Sequence<UInt8>, sha256 message: some Sequence<UInt8>) -> Bool {
        verify(signature: Array(signature), sha256: Array(message))
    }
}
