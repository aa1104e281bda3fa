import COpenSSL
import CShims

/// A sans-I/O DTLS 1.2 endpoint for DTLS-SRTP (RFC 5764) as WebRTC uses it (RFC 8827 §6.5).
///
/// The caller feeds received datagrams and timer expiries and sends whatever comes back;
/// the engine owns no socket and no clock. Time is monotonic nanoseconds (the same base as
/// the event loop's `Instant.nanoseconds`).
///
/// Transport: OpenSSL 3.0 has no datagram memory BIO, so both directions use plain memory
/// BIOs. Inbound, exactly one datagram is in the read BIO at a time (leftovers are
/// discarded), which preserves the boundary. Outbound, MTU probing is off and a link MTU is
/// set so OpenSSL keeps records within it; `DTLSRecordPacker` then cuts the byte stream
/// back into datagrams on record headers.
///
/// Invalid records: inbound datagrams pass `DTLSRecordFilter` first, which drops records
/// that no peer could have sent in the current state (malformed, wrong epoch, too short for
/// the negotiated suite) and on which OpenSSL 3.0 would abort the association instead of
/// discarding them as RFC 6347 §4.1.2.7 asks. A datagram left empty never reaches OpenSSL.
///
/// Retransmission: OpenSSL's DTLS timer reads its own wall clock and offers no way to
/// expire it early. The engine therefore only translates: after each input it asks
/// OpenSSL for the time left and reports `now + left` as `nextTimeout()`. `handleTimeout`
/// retransmits once OpenSSL agrees the timer has run out; if the caller's clock ran ahead
/// it simply reports a fresh deadline. Backoff follows `RetransmissionPolicy`.
///
/// Peer authentication is by certificate fingerprint only: the OpenSSL verify callback
/// ignores chain errors (WebRTC certificates are self-signed) and accepts the leaf iff its
/// digest equals the fingerprint from the remote SDP; a mismatch aborts the handshake with
/// a `bad_certificate` alert before any key is derived.
///
/// Confined to one thread (the transport's worker); not Sendable.
public final class DTLSEngine {
    /// Which side of the handshake we play (RFC 5763 §5: `a=setup:passive` is the server).
    public enum Role: Sendable, Hashable {
        /// Waits for the ClientHello.
        case server
        /// Sends the ClientHello on `start`.
        case client
    }

    /// How long to wait for an answer to a flight before resending it (RFC 6347 §4.2.4.1).
    public struct RetransmissionPolicy: Sendable, Hashable {
        public var initialMilliseconds: UInt32
        public var maximumMilliseconds: UInt32
        public init(initialMilliseconds: UInt32, maximumMilliseconds: UInt32) {
            self.initialMilliseconds = max(1, initialMilliseconds)
            self.maximumMilliseconds = max(self.initialMilliseconds, maximumMilliseconds)
        }
        /// Shorter than RFC 6347's 1 s start: media setup is interactive and the path was just
        /// proven by ICE. Doubling up to 8 s; OpenSSL gives up after 12 tries of one flight.
        public static let `default` = RetransmissionPolicy(initialMilliseconds: 500, maximumMilliseconds: 8_000)
    }

    /// The DTLS-SRTP exporter label (RFC 5764 §4.2).
    static let exporterLabel = "EXTRACTOR-dtls_srtp"

    public let role: Role
    /// Largest datagram this engine emits.
    public let mtu: Int
    public let retransmission: RetransmissionPolicy
    public private(set) var state: DTLSState = .new
    /// The profile the handshake agreed on; set once `.connected`.
    public private(set) var srtpProfile: SRTPProfile?
    /// Keys for `SRTPSession.inbound/outbound`; set once `.connected`.
    public private(set) var srtpKeys: SRTPKeys?
    /// The peer certificate (DER); set once `.connected`.
    public private(set) var remoteCertificate: [UInt8]?

    /// Held so the shared `SSL_CTX` outlives this engine's `SSL`.
    private let certificate: DTLSCertificate
    private let ssl: OpaquePointer
    private let readBIO: OpaquePointer
    private let writeBIO: OpaquePointer
    private let expectedFingerprint: (algorithm: String, digest: [UInt8])?
    private var fingerprintRejected = false
    private var deadline: UInt64?
    /// Epoch-1 record sizes under the negotiated suite; fixed once known (no renegotiation).
    private var protection: DTLSRecordProtection?
    /// Records dropped by `DTLSRecordFilter` so far (RFC 6347 §4.1.2.7 allows logging them).
    private(set) var discardedRecordCount = 0
    private var readBuffer = [UInt8](repeating: 0, count: 16_384 + 2_048)

    /// - Parameters:
    ///   - expectedRemoteFingerprint: from the peer's `a=fingerprint` (e.g. `("sha-256", "AB:…")`).
    ///     Nil skips the check; only tests and trusted peers should do that.
    ///   - srtpProfiles: offered (client) or accepted (server) in preference order.
    ///   - mtu: largest datagram to emit; 1200 leaves room for IPv6 + UDP + TURN headers.
    public init(
        role: Role, certificate: DTLSCertificate,
        expectedRemoteFingerprint: (algorithm: String, value: String)?,
        srtpProfiles: [SRTPProfile] = [.aeadAES128GCM, .aes128CMSHA1_80],
        mtu: Int = 1200, retransmission: RetransmissionPolicy = .default
    ) throws(DTLSSetupError) {
        if let expected = expectedRemoteFingerprint {
            guard DTLSFingerprint.messageDigest(forSDPName: expected.algorithm) != nil else {
                throw .unsupportedFingerprintAlgorithm(expected.algorithm)
            }
            guard let digest = DTLSFingerprint.parse(expected.value) else { throw .malformedFingerprint(expected.value) }
            expectedFingerprint = (expected.algorithm, digest)
        } else {
            expectedFingerprint = nil
        }
        guard !srtpProfiles.isEmpty else { throw .noSRTPProfiles }

        ERR_clear_error()
        guard let ssl = SSL_new(certificate.context) else {
            throw .openSSL(operation: "SSL_new", detail: DTLSFingerprint.lastOpenSSLError())
        }
        guard let rbio = BIO_new(BIO_s_mem()), let wbio = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw .openSSL(operation: "BIO_new", detail: DTLSFingerprint.lastOpenSSLError())
        }
        // An empty memory BIO must read as "try again", not end of file.
        _ = BIO_ctrl(rbio, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        _ = BIO_ctrl(wbio, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
        SSL_set_bio(ssl, rbio, wbio)

        let profileList = srtpProfiles.map(\.openSSLName).joined(separator: ":")
        guard SSL_set_tlsext_use_srtp(ssl, profileList) == 0 else {  // 0 means success here
            SSL_free(ssl)
            throw .openSSL(operation: "SSL_set_tlsext_use_srtp", detail: DTLSFingerprint.lastOpenSSLError())
        }
        // No renegotiation: the record filter only ever admits epochs 0 and 1.
        _ = SSL_set_options(ssl, SB_SSL_OP_NO_QUERY_MTU | SB_SSL_OP_NO_RENEGOTIATION)
        guard sb_dtls_set_link_mtu(ssl, mtu) == 1 else {
            SSL_free(ssl)
            throw .openSSL(operation: "DTLS_set_link_mtu", detail: DTLSFingerprint.lastOpenSSLError())
        }
        DTLS_set_timer_cb(ssl) { ssl, previous in DTLSEngine.timerDuration(ssl, previous: previous) }
        switch role {
        case .server: SSL_set_accept_state(ssl)
        case .client: SSL_set_connect_state(ssl)
        }

        self.role = role
        self.mtu = mtu
        self.retransmission = retransmission
        self.certificate = certificate
        self.ssl = ssl
        self.readBIO = rbio
        self.writeBIO = wbio
        // Callbacks find the engine through app data; the SSL never outlives `self`.
        _ = SSL_set_ex_data(ssl, 0, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        SSL_free(ssl)  // frees both BIOs
    }

    /// Whether an engine could check a peer against this `a=fingerprint` (a hash function it supports, well-formed
    /// hex): what `init` would otherwise refuse with `unsupportedFingerprintAlgorithm` or `malformedFingerprint`.
    public static func canCheck(fingerprint: (algorithm: String, value: String)) -> Bool {
        DTLSFingerprint.messageDigest(forSDPName: fingerprint.algorithm) != nil && DTLSFingerprint.parse(fingerprint.value) != nil
    }

    // MARK: Inputs

    /// Begins the handshake. A client returns its ClientHello; a server returns nothing and waits.
    public func start(now: UInt64) -> [[UInt8]] {
        guard state == .new else { return [] }
        state = .connecting
        var output = DTLSOutput()
        if role == .client { drive(&output) }
        finish(&output, now: now)
        return output.datagrams
    }

    /// Feeds one received datagram (first byte 20...63 per RFC 7983).
    public func receive(_ datagram: UnsafeRawBufferPointer, now: UInt64) -> DTLSOutput {
        var output = DTLSOutput()
        switch state {
        case .failed, .closed: return output
        case .new:
            guard role == .server else { return output }  // a client speaks first
            state = .connecting
            output.stateChange = .connecting
        case .connecting, .connected: break
        }
        guard let base = datagram.baseAddress, datagram.count > 0, datagram.count <= Int(Int32.max) else { return output }
        let screening = recordFilter().screen(datagram)
        discardedRecordCount += screening.discarded.count
        // Nothing left: OpenSSL is not called at all, so junk cannot provoke a retransmission
        // or any other output.
        guard !screening.accepted.isEmpty else { return output }
        // One datagram at a time in the read BIO keeps its boundary; the kept records of
        // one datagram, back to back, are again one datagram.
        _ = BIO_ctrl(readBIO, BIO_CTRL_RESET, 0, nil)
        for record in screening.accepted {
            guard BIO_write(readBIO, base + record.lowerBound, Int32(record.count)) == Int32(record.count) else {
                _ = BIO_ctrl(readBIO, BIO_CTRL_RESET, 0, nil)
                return output
            }
        }
        drive(&output)
        _ = BIO_ctrl(readBIO, BIO_CTRL_RESET, 0, nil)
        finish(&output, now: now)
        return output
    }

    /// Feeds one received datagram held in an array.
    public func receive(_ datagram: [UInt8], now: UInt64) -> DTLSOutput {
        datagram.withUnsafeBytes { receive($0, now: now) }
    }

    /// When `handleTimeout` should next be called, in the caller's monotonic nanoseconds.
    public func nextTimeout() -> UInt64? { deadline }

    /// Retransmits the last flight if its timer ran out (RFC 6347 §4.2.4).
    public func handleTimeout(now: UInt64) -> DTLSOutput {
        var output = DTLSOutput()
        guard state == .connecting || state == .connected, let deadline, now >= deadline else { return output }
        ERR_clear_error()
        if sb_dtls_handle_timeout(ssl) < 0 {
            transition(to: .failed(.retransmissionLimitReached), &output)
        }
        finish(&output, now: now)
        return output
    }

    /// Encrypts application data (an SCTP packet) into one record. Keep it under
    /// `mtu` minus record overhead (~40 bytes) or the datagram will exceed the MTU.
    public func send(applicationData: UnsafeRawBufferPointer) -> [[UInt8]] {
        guard state == .connected, let base = applicationData.baseAddress, applicationData.count > 0 else { return [] }
        ERR_clear_error()
        var output = DTLSOutput()
        let written = SSL_write(ssl, base, Int32(clamping: applicationData.count))
        if written <= 0 { classifyError(SSL_get_error(ssl, written), &output) }
        output.datagrams += drainWriteBIO()
        return output.datagrams
    }

    /// Sends close_notify (RFC 5246 §7.2.1) and moves to `.closed`.
    public func close() -> [[UInt8]] {
        switch state {
        case .failed, .closed: return []
        case .new:
            state = .closed
            return []
        case .connecting, .connected:
            ERR_clear_error()
            if state == .connected { _ = SSL_shutdown(ssl) }
            ERR_clear_error()
            state = .closed
            deadline = nil
            return drainWriteBIO()
        }
    }

    // MARK: Record filter

    /// What may reach OpenSSL now: plaintext only while handshaking, epoch 1 only once a
    /// cipher suite is negotiated, and then no shorter than that suite's overhead.
    private func recordFilter() -> DTLSRecordFilter {
        if protection == nil, let cipher = SSL_get_pending_cipher(ssl) ?? SSL_get_current_cipher(ssl) {
            protection = Self.protection(of: cipher)
        }
        return DTLSRecordFilter(acceptsPlaintext: state != .connected, protection: protection)
    }

    /// The record overhead of an OpenSSL cipher suite. Suites the table does not name get
    /// the smallest overhead of their kind, so a genuine record is never dropped.
    static func protection(of cipher: OpaquePointer) -> DTLSRecordProtection {
        let cipherNID = SSL_CIPHER_get_cipher_nid(cipher)
        if SSL_CIPHER_is_aead(cipher) == 1 {
            switch cipherNID {
            case NID_aes_128_gcm, NID_aes_256_gcm:
                return .aead(explicitNonceLength: 8, tagLength: 16)  // RFC 5288 §3
            case NID_chacha20_poly1305:
                return .aead(explicitNonceLength: 0, tagLength: 16)  // RFC 7905 §2
            default:
                // At most any AEAD suite's overhead: AES-CCM_8, the smallest, has 16 (RFC 6655 §3).
                return .aead(explicitNonceLength: 0, tagLength: 8)
            }
        }
        let cipherName = OBJ_nid2sn(cipherNID)
        let digestName = OBJ_nid2sn(SSL_CIPHER_get_digest_nid(cipher))
        let block = cipherName.flatMap { EVP_get_cipherbyname($0) }.map { Int(EVP_CIPHER_get_block_size($0)) } ?? 1
        let mac = digestName.flatMap { EVP_get_digestbyname($0) }.map { Int(EVP_MD_get_size($0)) } ?? 0
        return .blockCipher(blockLength: max(1, block), macLength: max(0, mac))
    }

    // MARK: Driving OpenSSL

    private func drive(_ output: inout DTLSOutput) {
        ERR_clear_error()
        if state == .connecting {
            let result = SSL_do_handshake(ssl)
            if result == 1 {
                completeHandshake(&output)
            } else {
                classifyError(SSL_get_error(ssl, result), &output)
            }
        }
        if state == .connected { readApplicationData(&output) }
    }

    private func readApplicationData(_ output: inout DTLSOutput) {
        while state == .connected {
            let count = readBuffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else {
                classifyError(SSL_get_error(ssl, count), &output)
                return
            }
            output.applicationData.append(Array(readBuffer[0..<Int(count)]))
        }
    }

    private func classifyError(_ code: Int32, _ output: inout DTLSOutput) {
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            ERR_clear_error()
        case SSL_ERROR_ZERO_RETURN:
            // Peer's close_notify: answer in kind while the keys still work.
            ERR_clear_error()
            if state == .connected { _ = SSL_shutdown(ssl) }
            ERR_clear_error()
            transition(to: .closed, &output)
        default:
            transition(to: .failed(currentFailure()), &output)
        }
    }

    private func currentFailure() -> DTLSFailure {
        if fingerprintRejected {
            ERR_clear_error()
            return .fingerprintMismatch
        }
        let code = ERR_peek_error()
        let reason = ERR_GET_REASON(code)
        if reason >= SSL_AD_REASON_OFFSET && reason < SSL_AD_REASON_OFFSET + 256 {
            ERR_clear_error()
            return .alertReceived(description: UInt8(reason - SSL_AD_REASON_OFFSET))
        }
        return .handshakeFailed(detail: DTLSFingerprint.lastOpenSSLError())
    }

    private func completeHandshake(_ output: inout DTLSOutput) {
        // The verify callback already checked the leaf; check again in case OpenSSL ever
        // completes a handshake without calling it (it must not, with tickets and cache off).
        guard let peer = SSL_get1_peer_certificate(ssl) else {
            transition(to: .failed(.missingRemoteCertificate), &output)
            return
        }
        defer { X509_free(peer) }
        guard let der = Self.encode(peer) else {
            transition(to: .failed(.missingRemoteCertificate), &output)
            return
        }
        guard acceptsPeer(der: der) else {
            transition(to: .failed(.fingerprintMismatch), &output)
            return
        }
        guard let selected = SSL_get_selected_srtp_profile(ssl),
            let profile = SRTPProfile(identifier: UInt16(truncatingIfNeeded: selected.pointee.id))
        else {
            transition(to: .failed(.noSRTPProfile), &output)
            return
        }
        var material = [UInt8](repeating: 0, count: profile.keyingMaterialLength)
        let label = Self.exporterLabel
        let exported = material.withUnsafeMutableBufferPointer { out in
            SSL_export_keying_material(ssl, out.baseAddress, out.count, label, label.utf8.count, nil, 0, 0)
        }
        guard exported == 1, let keys = SRTPKeys(keyingMaterial: material, profile: profile, isClient: role == .client)
        else {
            transition(to: .failed(.keyExportFailed), &output)
            return
        }
        for i in material.indices { material[i] = 0 }
        remoteCertificate = der
        srtpProfile = profile
        srtpKeys = keys
        transition(to: .connected, &output)
    }

    private func transition(to newState: DTLSState, _ output: inout DTLSOutput) {
        guard state != newState else { return }
        state = newState
        output.stateChange = newState
    }

    /// Collects what OpenSSL wrote (alerts included, even on failure) and re-reads the timer.
    private func finish(_ output: inout DTLSOutput, now: UInt64) {
        output.datagrams += drainWriteBIO()
        switch state {
        case .failed, .closed:
            deadline = nil
        case .new, .connecting, .connected:
            var milliseconds = 0
            if sb_dtls_get_timeout_ms(ssl, &milliseconds) == 1 {
                deadline = now &+ UInt64(max(0, milliseconds)) &* 1_000_000
            } else {
                deadline = nil
            }
        }
    }

    private func drainWriteBIO() -> [[UInt8]] {
        let pending = sb_bio_pending(writeBIO)
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress, Int32($0.count)) }
        guard read > 0 else { return [] }
        if Int(read) < bytes.count { bytes.removeLast(bytes.count - Int(read)) }
        return DTLSRecordPacker.datagrams(from: bytes, mtu: mtu)
    }

    // MARK: Peer certificate

    private func acceptsPeer(der: [UInt8]) -> Bool {
        guard let expected = expectedFingerprint else { return true }
        guard let digest = DTLSCertificate.digest(of: der, algorithm: expected.algorithm) else { return false }
        return DTLSFingerprint.matches(digest, expected: expected.digest)
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

    /// OpenSSL verify callback: chain errors are irrelevant (self-signed by design); the leaf
    /// passes iff it matches the expected fingerprint (RFC 8122 §5, RFC 5763 §6.6).
    static func verifyPeer(preverified: Int32, store: OpaquePointer?) -> Int32 {
        guard let store,
            let sslPointer = X509_STORE_CTX_get_ex_data(store, SSL_get_ex_data_X509_STORE_CTX_idx()),
            let enginePointer = SSL_get_ex_data(OpaquePointer(sslPointer), 0)
        else { return 0 }
        guard X509_STORE_CTX_get_error_depth(store) == 0 else { return 1 }
        let engine = Unmanaged<DTLSEngine>.fromOpaque(enginePointer).takeUnretainedValue()
        guard let leaf = X509_STORE_CTX_get_current_cert(store), let der = encode(leaf), engine.acceptsPeer(der: der)
        else {
            engine.fingerprintRejected = true
            X509_STORE_CTX_set_error(store, X509_V_ERR_CERT_REJECTED)  // sent as bad_certificate
            return 0
        }
        X509_STORE_CTX_set_error(store, X509_V_OK)
        return 1
    }

    static let verifyCallback: @convention(c) (Int32, OpaquePointer?) -> Int32 = { preverified, store in
        DTLSEngine.verifyPeer(preverified: preverified, store: store)
    }

    /// OpenSSL timer callback: microseconds until the next retransmission of this flight.
    static func timerDuration(_ ssl: OpaquePointer?, previous: UInt32) -> UInt32 {
        var policy = RetransmissionPolicy.default
        if let ssl, let pointer = SSL_get_ex_data(ssl, 0) {
            policy = Unmanaged<DTLSEngine>.fromOpaque(pointer).takeUnretainedValue().retransmission
        }
        let initial = policy.initialMilliseconds.multipliedReportingOverflow(by: 1000)
        let maximum = policy.maximumMilliseconds.multipliedReportingOverflow(by: 1000)
        let cap = maximum.overflow ? UInt32.max : maximum.partialValue
        if previous == 0 { return initial.overflow ? cap : min(initial.partialValue, cap) }
        let doubled = previous.multipliedReportingOverflow(by: 2)
        return doubled.overflow ? cap : min(doubled.partialValue, cap)
    }
}
