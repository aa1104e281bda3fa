import COpenSSL
import CShims

/// Why a DTLS certificate could not be created.
public struct DTLSCertificateError: Error, Sendable, Hashable {
    /// The OpenSSL call that failed.
    public var operation: String
    /// OpenSSL's error string, if it left one.
    public var detail: String
}

/// The self-signed ECDSA P-256 certificate a server presents in every DTLS handshake.
///
/// WebRTC authenticates DTLS peers by the certificate fingerprint carried in SDP
/// (RFC 8122 §5, RFC 8827 §6.5), not by a CA chain, so one throwaway certificate per
/// process is enough. It also owns the `SSL_CTX` every `DTLSEngine` is created from.
///
/// Sendable because the wrapped OpenSSL objects are never mutated after `init` returns:
/// X509 and EVP_PKEY are only read (refcounted), and an `SSL_CTX` is safe to share across
/// threads for `SSL_new` once configuration is complete.
public final class DTLSCertificate: @unchecked Sendable {
    /// The SDP `a=fingerprint:sha-256` value: uppercase hex pairs joined by colons.
    public let fingerprintSHA256: String
    /// The certificate in DER form.
    public let der: [UInt8]

    let certificate: OpaquePointer
    let privateKey: OpaquePointer
    /// Shared DTLS context: cipher suites, verification mode, our certificate and key.
    let context: OpaquePointer

    /// Generates a fresh key pair and certificate.
    ///
    /// - Parameters:
    ///   - commonName: subject and issuer CN; browsers ignore it.
    ///   - notBeforeDays/notAfterDays: validity window around now, backdated to tolerate
    ///     peers whose clocks run behind.
    public init(commonName: String = "switchboard", notBeforeDays: Int = 30, notAfterDays: Int = 365)
        throws(DTLSCertificateError)
    {
        ERR_clear_error()
        guard let key = Self.generateP256Key() else { throw Self.failure("EVP_PKEY_generate") }
        guard let x509 = X509_new() else {
            EVP_PKEY_free(key)
            throw Self.failure("X509_new")
        }
        do throws(DTLSCertificateError) {
            try Self.fill(x509, key: key, commonName: commonName, notBeforeDays: notBeforeDays, notAfterDays: notAfterDays)
        } catch {
            X509_free(x509)
            EVP_PKEY_free(key)
            throw error
        }
        guard let der = Self.encode(x509), let fingerprint = Self.fingerprint(ofDER: der, algorithm: "sha-256"),
            let context = Self.makeContext(certificate: x509, key: key)
        else {
            X509_free(x509)
            EVP_PKEY_free(key)
            throw Self.failure("SSL_CTX_new")
        }
        self.certificate = x509
        self.privateKey = key
        self.context = context
        self.der = der
        self.fingerprintSHA256 = fingerprint
    }

    deinit {
        SSL_CTX_free(context)
        X509_free(certificate)
        EVP_PKEY_free(privateKey)
    }

    /// The fingerprint of a DER certificate in SDP form (RFC 8122 §5), or nil for a hash
    /// function name OpenSSL does not know. `algorithm` is the SDP token: `sha-256`, `sha-1`, …
    public static func fingerprint(ofDER der: [UInt8], algorithm: String = "sha-256") -> String? {
        guard let digest = digest(of: der, algorithm: algorithm) else { return nil }
        return DTLSFingerprint.format(digest)
    }

    static func digest(of der: [UInt8], algorithm: String) -> [UInt8]? {
        guard let md = DTLSFingerprint.messageDigest(forSDPName: algorithm) else { return nil }
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        let ok = der.withUnsafeBytes { input in
            out.withUnsafeMutableBytes { output in
                EVP_Digest(
                    input.baseAddress, input.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    &length, md, nil)
            }
        }
        guard ok == 1 else { return nil }
        return Array(out.prefix(Int(length)))
    }

    // MARK: Construction

    private static func generateP256Key() -> OpaquePointer? {
        guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
        defer { EVP_PKEY_CTX_free(ctx) }
        guard EVP_PKEY_keygen_init(ctx) == 1, EVP_PKEY_CTX_set_group_name(ctx, "P-256") == 1 else { return nil }
        var key: OpaquePointer?
        guard EVP_PKEY_generate(ctx, &key) == 1 else { return nil }
        return key
    }

    private static func fill(
        _ x509: OpaquePointer, key: OpaquePointer, commonName: String, notBeforeDays: Int, notAfterDays: Int
    ) throws(DTLSCertificateError) {
        guard X509_set_version(x509, 2) == 1 else { throw failure("X509_set_version") }

        // 128-bit random positive serial (RFC 5280 §4.1.2.2 allows up to 20 octets).
        var serial = [UInt8](repeating: 0, count: 16)
        guard RAND_bytes(&serial, Int32(serial.count)) == 1 else { throw failure("RAND_bytes") }
        serial[0] &= 0x7F
        serial[0] |= 0x01
        guard let bn = BN_bin2bn(serial, Int32(serial.count), nil) else { throw failure("BN_bin2bn") }
        defer { BN_free(bn) }
        guard BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x509)) != nil else { throw failure("BN_to_ASN1_INTEGER") }

        guard X509_gmtime_adj(X509_getm_notBefore(x509), -notBeforeDays * 86_400) != nil,
            X509_gmtime_adj(X509_getm_notAfter(x509), notAfterDays * 86_400) != nil
        else { throw failure("X509_gmtime_adj") }

        guard let name = X509_get_subject_name(x509),
            X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, commonName, -1, -1, 0) == 1,
            X509_set_issuer_name(x509, name) == 1
        else { throw failure("X509_NAME_add_entry_by_txt") }

        guard X509_set_pubkey(x509, key) == 1 else { throw failure("X509_set_pubkey") }
        guard X509_sign(x509, key, EVP_sha256()) > 0 else { throw failure("X509_sign") }
    }

    private static func encode(_ x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? der : nil
    }

    /// DTLS 1.2 only (RFC 8827 §6.5 requires 1.2+; OpenSSL 3.0 has no DTLS 1.3), ECDHE
    /// suites with AEAD first, no tickets or session cache (every association is fresh, so
    /// the fingerprint check always runs), and peer certificates required in both directions.
    private static func makeContext(certificate: OpaquePointer, key: OpaquePointer) -> OpaquePointer? {
        guard let ctx = SSL_CTX_new(DTLS_method()) else { return nil }
        let ok =
            sb_ssl_ctx_set_min_proto(ctx, DTLS1_2_VERSION) == 1
            && sb_ssl_ctx_set_max_proto(ctx, DTLS1_2_VERSION) == 1
            // AEAD suites only (every WebRTC peer offers them): with CBC + encrypt-then-MAC, OpenSSL 3.0 answers
            // one forged epoch-1 record with a fatal bad_record_mac, so a spoofed datagram could end a call.
            && SSL_CTX_set_cipher_list(
                ctx,
                "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:"
                    + "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-CHACHA20-POLY1305") == 1
            && SSL_CTX_use_certificate(ctx, certificate) == 1
            && SSL_CTX_use_PrivateKey(ctx, key) == 1
            && SSL_CTX_check_private_key(ctx) == 1
        guard ok else {
            SSL_CTX_free(ctx)
            return nil
        }
        _ = SSL_CTX_set_options(ctx, SB_SSL_OP_NO_QUERY_MTU | SB_SSL_OP_NO_TICKET)
        _ = SSL_CTX_ctrl(ctx, SSL_CTRL_SET_SESS_CACHE_MODE, Int(SSL_SESS_CACHE_OFF), nil)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, DTLSEngine.verifyCallback)
        return ctx
    }

    private static func failure(_ operation: String) -> DTLSCertificateError {
        DTLSCertificateError(operation: operation, detail: DTLSFingerprint.lastOpenSSLError())
    }
}
