import COpenSSL

/// An RSA public key for RS256 verification (RFC 7518 section 3.3).
// @unchecked Sendable: the EVP_PKEY is never mutated after init; OpenSSL 3 allows concurrent
// read-only use of one EVP_PKEY as long as each operation has its own EVP_MD_CTX, which `verify` creates.
public final class RSAPublicKey: @unchecked Sendable {
    let pkey: OpaquePointer
    /// A verify context set up once (PKCS#1 v1.5 padding, SHA-256) and only duplicated afterwards: in
    /// OpenSSL 3 setting a context up looks the algorithm up in the provider, which costs about as much
    /// as the RSA operation itself. Never used directly, so concurrent `EVP_PKEY_CTX_dup` only reads it.
    private let verifyTemplate: OpaquePointer?

    private init(owning pkey: OpaquePointer) {
        self.pkey = pkey
        verifyTemplate = Self.makeVerifyTemplate(pkey)
    }

    deinit {
        if let verifyTemplate { EVP_PKEY_CTX_free(verifyTemplate) }
        EVP_PKEY_free(pkey)
    }

    private static func makeVerifyTemplate(_ pkey: OpaquePointer) -> OpaquePointer? {
        guard let ctx = EVP_PKEY_CTX_new_from_pkey(nil, pkey, nil) else {
            _ = OpenSSLError.drain()
            return nil
        }
        guard EVP_PKEY_verify_init(ctx) == 1,
              EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PADDING) == 1,
              EVP_PKEY_CTX_set_signature_md(ctx, EVP_sha256()) == 1 else {
            _ = OpenSSLError.drain()
            EVP_PKEY_CTX_free(ctx)
            return nil
        }
        return ctx
    }

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
        self.init(owning: try RSAKeyError.checkedRSA(pkey))
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
        if let verifyTemplate {
            let digest = SHA256.hash(message)
            guard let ctx = EVP_PKEY_CTX_dup(verifyTemplate) else { return false }
            defer { EVP_PKEY_CTX_free(ctx) }
            let result = signature.withUnsafeBufferPointer { s in
                EVP_PKEY_verify(ctx, s.baseAddress, s.count, digest, digest.count)
            }
            if result != 1 { ERR_clear_error() }
            return result == 1
        }
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
