import CShims
import Crypto
import Glibc
import Media
import SRTP
import Wire

/// The client role of one WebRTC transport on its own UDP socket: ICE controlling with
/// USE-CANDIDATE (RFC 8445 §7.2.4) towards the server's ICE-lite candidate, DTLS in whichever
/// role the SDP gave it, then SRTP both ways (RFC 5764). The load generator's peers and the
/// client SDK's media both sit on it.
///
/// Datagrams are demultiplexed by their first byte (RFC 7983); STUN and DTLS are handled here,
/// RTP comes back unprotected in place and RTCP is left to the owner. Confined to the thread of
/// the loop its socket is registered on; no allocation on the RTP path.
package final class ClientTransport {
    /// What one received datagram turned out to be.
    package enum Received {
        /// Nothing for the owner (STUN, DTLS, or a packet that did not authenticate).
        case none
        /// An RTP packet, unprotected in place: its plain length.
        case rtp(length: Int)
        /// A protected RTCP packet (RFC 5761 demultiplexing); unprotect it with `unprotectRTCP`.
        case rtcp
    }

    package let socket: UDPSocket
    package let local: ICEParameters
    package let certificate: DTLSCertificate
    private let srtpProfiles: [SRTPProfile]
    private let dtlsRetransmission: DTLSEngine.RetransmissionPolicy
    private var remote = ICEParameters(usernameFragment: "", password: "")
    /// The server's candidate, the only address checks are expected from.
    private var server: PeerAddress?
    private let destination: UnsafeMutablePointer<sockaddr_storage>
    private var dtls: DTLSEngine?
    private var srtpIn: SRTPTransform?
    private var srtpOut: SRTPTransform?
    private let tieBreaker = SystemRandom().next(UInt64.self)
    private var lastCheck: UInt64 = 0
    package private(set) var iceConnected = false
    package private(set) var connected = false
    package private(set) var failed = false
    package private(set) var failure: String?

    /// `dtlsRetransmission`: when DTLS flights are sent again. A full ICE agent on the server (Janus's
    /// libnice) drops a ClientHello that arrives before its own triggered check has succeeded, so the
    /// first retransmission decides how long such a join takes.
    package init(certificate: DTLSCertificate, bindHost: String, srtpProfiles: [SRTPProfile],
                 dtlsRetransmission: DTLSEngine.RetransmissionPolicy = .default) throws(Media.SocketError) {
        socket = try UDPSocket(host: bindHost, port: 0)
        local = ICEParameters.random(iceLite: false)
        destination = .allocate(capacity: 1)
        destination.initialize(to: sockaddr_storage())
        self.certificate = certificate
        self.srtpProfiles = srtpProfiles
        self.dtlsRetransmission = dtlsRetransmission
    }

    deinit { destination.deallocate() }

    /// Points the transport at the server's candidate and sets up DTLS.
    package func configure(remote: ICEParameters, server: PeerAddress, fingerprint: DTLSFingerprintValue, dtlsRole: DTLSRole) throws {
        self.remote = remote
        self.server = server
        server.write(to: destination, ipv6Socket: socket.isIPv6)
        dtls = try DTLSEngine(
            role: dtlsRole == .client ? .client : .server, certificate: certificate,
            expectedRemoteFingerprint: (fingerprint.algorithm, fingerprint.value), srtpProfiles: srtpProfiles,
            retransmission: dtlsRetransmission)
    }

    /// Whether `configure` has run.
    package var isConfigured: Bool { dtls != nil }

    // MARK: ICE

    private func sendCheck(now: UInt64) {
        lastCheck = now
        let request = STUNMessage(
            type: .bindingRequest, transactionID: STUNTransactionID(word0: UInt32(truncatingIfNeeded: now), word1: 7, word2: 9),
            attributes: [
                .username("\(remote.usernameFragment):\(local.usernameFragment)"), .priority(1_853_824_767),
                .iceControlling(tieBreaker: tieBreaker), .useCandidate,
            ])
        guard let bytes = try? request.serialize(
            integrityKey: Array(remote.password.utf8), hmacSHA1: { HMAC.sha1(key: $0, data: $1) }, fingerprint: true) else { return }
        send(bytes)
    }

    /// Answers a full ICE agent's checks (RFC 8445 §7.3): a server that is not ICE-lite (Janus's
    /// libnice even in its lite mode) sends triggered checks and nominates only once they succeed.
    private func answerCheck(_ request: STUNMessage, bytes: UnsafeRawBufferPointer) {
        let key = Array(local.password.utf8)
        guard let server, request.verifyIntegrity(in: bytes, key: key, hmacSHA1: { HMAC.sha1(key: $0, data: $1) }) else { return }
        let mapped = server.isIPv6 ? STUNAddress.ipv6(high: server.high, low: server.low, port: server.port)
            : STUNAddress.ipv4(UInt32(truncatingIfNeeded: server.low), port: server.port)
        guard let reply = try? STUNMessage.bindingSuccess(to: request, mappedAddress: mapped).serialize(
            integrityKey: key, hmacSHA1: { HMAC.sha1(key: $0, data: $1) }, fingerprint: true) else { return }
        send(reply)
    }

    private func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in _ = send(raw.baseAddress!, length: raw.count) }
    }

    /// Sends one datagram to the server's candidate as it is.
    package func send(_ p: UnsafeRawPointer, length: Int) -> Bool {
        withUnsafePointer(to: destination.pointee) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(socket.fd, p, length, Int32(SB_MSG_DONTWAIT), $0,
                       socklen_t(socket.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size))
            }
        } >= 0
    }

    // MARK: Receive

    /// Handles one datagram: STUN and DTLS here, RTP unprotected in place for the owner.
    package func receive(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64) -> Received {
        guard length > 0 else { return .none }
        let first = Bytes.byte(p, 0)
        if first <= 3 {
            guard let message = try? STUNMessage.parse(UnsafeRawBufferPointer(start: p, count: length)) else { return .none }
            if message.type == .bindingSuccess, !iceConnected {
                iceConnected = true
                if let dtls, dtls.role == .client { for d in dtls.start(now: now) { send(d) } }
            } else if message.type == .bindingRequest {
                answerCheck(message, bytes: UnsafeRawBufferPointer(start: p, count: length))
            }
        } else if first >= 20 && first <= 63 {
            guard let dtls else { return .none }
            let output = dtls.receive(UnsafeRawBufferPointer(start: p, count: length), now: now)
            for d in output.datagrams { send(d) }
            if let change = output.stateChange { apply(change) }
        } else if first >= 128 && first <= 191, length >= 12 {
            let second = Bytes.byte(p, 1)
            if second >= 192 && second <= 223 { return .rtcp }
            guard let srtpIn else { return .none }
            var size = length
            guard srtpIn.unprotectRTP(p, length: &size) else { return .none }
            return .rtp(length: size)
        }
        return .none
    }

    /// Unprotects an RTCP packet in place; its plain length, or nil when it does not authenticate.
    package func unprotectRTCP(_ p: UnsafeMutableRawPointer, length: Int) -> Int? {
        guard let srtpIn else { return nil }
        var size = length
        return srtpIn.unprotectRTCP(p, length: &size) ? size : nil
    }

    private func apply(_ state: DTLSState) {
        switch state {
        case .connected:
            guard let dtls, let keys = dtls.srtpKeys, let profile = dtls.srtpProfile else {
                failed = true
                failure = "no SRTP keys"
                return
            }
            srtpIn = try? SRTPTransform(profile: profile, masterKey: keys.remoteKey, masterSalt: keys.remoteSalt, direction: .inbound)
            srtpOut = try? SRTPTransform(profile: profile, masterKey: keys.localKey, masterSalt: keys.localSalt, direction: .outbound)
            connected = srtpIn != nil && srtpOut != nil
        case .failed(let reason):
            failed = true
            failure = "DTLS \(reason)"
        case .closed:
            failed = true
            failure = "DTLS closed"
        default:
            break
        }
    }

    // MARK: Timers

    /// ICE checks every 100 ms until connected, consent every 5 s after; DTLS retransmissions.
    package func tick(now: UInt64) {
        guard dtls != nil else { return }
        let interval: UInt64 = iceConnected ? 5_000_000_000 : 100_000_000
        if now &- lastCheck >= interval { sendCheck(now: now) }
        if let dtls, let deadline = dtls.nextTimeout(), now >= deadline {
            let output = dtls.handleTimeout(now: now)
            for d in output.datagrams { send(d) }
            if let change = output.stateChange { apply(change) }
        }
    }

    // MARK: Send

    /// Protects an RTCP compound packet and sends it; false when it could not be (not connected yet).
    package func sendRTCP(_ packet: [UInt8]) -> Bool {
        guard let srtpOut else { return false }
        var bytes = packet + [UInt8](repeating: 0, count: 32)
        var size = packet.count
        let capacity = bytes.count
        let protected = bytes.withUnsafeMutableBytes { srtpOut.protectRTCP($0.baseAddress!, length: &size, capacity: capacity) }
        guard protected else { return false }
        return bytes.withUnsafeBytes { send($0.baseAddress!, length: size) }
    }

    /// Protects the RTP packet at `p` in place (`capacity` bytes available) and sends it; false when
    /// it could not be protected (not connected yet). A full socket buffer drops the packet, as the
    /// network would.
    package func sendRTP(_ p: UnsafeMutableRawPointer, length: Int, capacity: Int) -> Bool {
        guard let srtpOut else { return false }
        var size = length
        guard srtpOut.protectRTP(p, length: &size, capacity: capacity) else { return false }
        _ = send(p, length: size)
        return true
    }

    /// Where a transport that is not connected got stuck.
    package var progress: String {
        "port \(socket.localPort): ICE \(iceConnected ? "connected" : "checking"), DTLS \(dtls.map { "\($0.role) \($0.state)" } ?? "not configured")"
    }
}
