import CShims
import Crypto
import Glibc
import Media
import SRTP
import Wire

/// The client role of one WebRTC transport on its own UDP socket: ICE controlling towards the server's ICE-lite
/// candidate, nominating the pair it selected (USE-CANDIDATE, RFC 8445 §7.2.4 and §8.1.1), DTLS in whichever
/// role the SDP gave it, then SRTP both ways (RFC 5764). The load generator's peers and the
/// client SDK's media both sit on it. Peer to peer (the SDK in a relayed video session), the other
/// end is a full ICE agent too: checks go to each of its candidates (as they trickle in, and to the
/// addresses its own checks come from) in the role offer/answer gave this side, and the first pair
/// that answers carries everything. With a TURN server (`useRelay`), this side also has a relayed candidate, a TURN
/// allocation of its own (Send and Data indications): checks go to each of the other end's candidates both from its
/// socket and through the relay, and whichever pair answers first carries everything, so two ends that cannot reach
/// each other's addresses still meet at a relay (RFC 8445 §5.1.1.2). Relay-only, every datagram goes through the
/// allocation, its relayed address the only candidate this side offers.
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
        /// A protected RTCP packet (RFC 5761 demultiplexing) of `length` bytes at the start of the buffer (a relayed
        /// one was moved there); unprotect it with `unprotectRTCP`.
        case rtcp(length: Int)
    }

    package let socket: UDPSocket
    package let local: ICEParameters
    package let certificate: DTLSCertificate
    private let srtpProfiles: [SRTPProfile]
    private let dtlsRetransmission: DTLSEngine.RetransmissionPolicy
    private var remote = ICEParameters(usernameFragment: "", password: "")
    /// The other end's candidates (the server's one, or a peer's), checked in turn until one answers; then the
    /// one `destination` holds.
    private var candidates: [PeerAddress] = []
    private var selected: PeerAddress?
    /// Controlling (the offerer, or towards an ICE-lite server) nominates with USE-CANDIDATE; controlled does not.
    private var controlling = true
    /// Controlling: whether a check nominating the selected pair has been answered (until then they go every 100 ms).
    private var nominationAnswered = false
    /// At most this many candidates are checked (a peer's every interface, and the addresses its checks come from).
    static let maxCandidates = 16
    private let destination: UnsafeMutablePointer<sockaddr_storage>
    /// The peer `destination` holds.
    private var pointed: PeerAddress?
    /// The TURN allocation of this side's relayed candidate, and the TURN server's address.
    private var relay: TURNAllocation?
    /// Relay-only: nothing is sent from the socket's own addresses.
    private var relayOnly = false
    /// Whether the selected pair, the one carrying the media, is the relayed candidate's (false until one is selected).
    package private(set) var selectedViaRelay = false
    /// Whether what `send` sends goes through the relay: the selected pair's way, or before one is selected, relay-only's.
    private var viaRelay = false
    private let relayServer: UnsafeMutablePointer<sockaddr_storage>
    private var dtls: DTLSEngine?
    private var srtpIn: SRTPTransform?
    private var srtpOut: SRTPTransform?
    private let tieBreaker = SystemRandom().next(UInt64.self)
    private var lastCheck: UInt64 = 0
    private var lastTick: UInt64 = 0
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
        relayServer = .allocate(capacity: 1)
        relayServer.initialize(to: sockaddr_storage())
        self.certificate = certificate
        self.srtpProfiles = srtpProfiles
        self.dtlsRetransmission = dtlsRetransmission
    }

    deinit {
        destination.deallocate()
        relayServer.deallocate()
    }

    /// Gathers a relayed candidate on the TURN server `server`, asking for the allocation now; `only`: everything goes
    /// through it (relay-only ICE), else it is checked beside the socket's own addresses.
    package func useRelay(_ server: TURNServer, only: Bool, now: UInt64) {
        var allocation = TURNAllocation(server: server)
        server.address.write(to: relayServer, ipv6Socket: socket.isIPv6)
        let first = allocation.start(now: now)
        relay = allocation
        relayOnly = only
        viaRelay = only
        sendToRelay(first)
        for c in candidates { if let bytes = relay?.permit(c, now: now) { sendToRelay(bytes) } }
    }

    /// Deletes the relayed candidate's allocation (the connection is closing), so the TURN server frees it now rather
    /// than when its lifetime ends.
    package func releaseRelay(now: UInt64) {
        if let bytes = relay?.release(now: now) { sendToRelay(bytes) }
    }

    /// The relayed candidate's allocation state (`.allocated` once this side has it), nil without a TURN server.
    package var relayState: TURNAllocation.State? { relay?.state }

    /// The candidates this side offers: its host candidates, or relay-only its relayed address once allocated (beside
    /// host candidates, the relayed one is trickled when the allocation is made: `relayedCandidate`).
    package func offerCandidates() -> [String] {
        relayOnly ? relayedCandidate().map { [$0] } ?? [] : hostCandidates()
    }

    /// The relayed candidate's `a=candidate:` value, once allocated (its foundation after the host candidates').
    package func relayedCandidate() -> String? {
        guard let relayed = relay?.relayed else { return nil }
        let foundation = relayOnly ? 1 : hostCandidates().count + 1
        let priority = UInt32(65_535) << 8 | 255  // type preference 0 (RFC 8445 §5.1.2.2)
        return "\(foundation) 1 udp \(priority) \(relayed.host) \(relayed.port) typ relay raddr 0.0.0.0 rport 0"
    }

    private func sendToRelay(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        _ = bytes.withUnsafeBytes { raw in
            sendto(socket.fd, raw.baseAddress, raw.count, Int32(SB_MSG_DONTWAIT), UnsafeRawPointer(relayServer).assumingMemoryBound(to: sockaddr.self),
                   socklen_t(socket.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size))
        }
    }

    /// Points the transport at the server's candidate and sets up DTLS.
    package func configure(remote: ICEParameters, server: PeerAddress, fingerprint: DTLSFingerprintValue, dtlsRole: DTLSRole) throws {
        try configure(remote: remote, candidates: [server], fingerprint: fingerprint, dtlsRole: dtlsRole, controlling: true)
    }

    /// Sets up ICE towards `candidates` (more may follow with `addCandidate`) in the role given, and DTLS.
    package func configure(remote: ICEParameters, candidates: [PeerAddress], fingerprint: DTLSFingerprintValue, dtlsRole: DTLSRole,
                           controlling: Bool) throws {
        self.remote = remote
        self.controlling = controlling
        for c in candidates { addCandidate(c) }
        dtls = try DTLSEngine(
            role: dtlsRole == .client ? .client : .server, certificate: certificate,
            expectedRemoteFingerprint: (fingerprint.algorithm, fingerprint.value), srtpProfiles: srtpProfiles,
            retransmission: dtlsRetransmission)
    }

    /// Whether `configure` has run.
    package var isConfigured: Bool { dtls != nil }

    /// Another candidate of the other end to check (a trickled one); ignored once a pair answers, or past
    /// `maxCandidates`, or when this socket cannot reach its family (IPv6 from an IPv4-only socket).
    /// A socket bound to a loopback address checks loopback candidates only.
    package func addCandidate(_ candidate: PeerAddress) {
        guard selected == nil, candidates.count < Self.maxCandidates, !candidates.contains(candidate),
              socket.isIPv6 || !candidate.isIPv6, !boundToLoopback || candidate.isLoopback else { return }
        candidates.append(candidate)
        if candidates.count == 1 { point(at: candidate) }
        if relay != nil, let bytes = relay?.permit(candidate, now: lastTick) { sendToRelay(bytes) }
    }

    private var boundToLoopback: Bool { socket.boundAddress?.isLoopback ?? false }

    /// This socket's host candidates (RFC 8445 §5.1.1.1), as `a=candidate:` values: its own address when it is bound
    /// to one, else the port on each address of the machine's interfaces that are up (IPv6 ones on a dual-stack
    /// socket; link-local IPv6 left out, as it needs a scope), loopback last, for a peer to check.
    package func hostCandidates() -> [String] {
        if let bound = socket.boundAddress, bound.high != 0 || bound.low != 0 {
            return [Self.hostCandidate(bound, rank: 0)]
        }
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let first = list else { return [] }
        defer { freeifaddrs(list) }
        var found: [(address: PeerAddress, loopback: Bool)] = []
        var entry: UnsafeMutablePointer<ifaddrs>? = first
        while let e = entry {
            defer { entry = e.pointee.ifa_next }
            guard let raw = e.pointee.ifa_addr, e.pointee.ifa_flags & UInt32(IFF_UP) != 0 else { continue }
            let family = Int32(raw.pointee.sa_family)
            guard family == AF_INET || (family == AF_INET6 && socket.isIPv6) else { continue }
            let storage = UnsafeMutableRawPointer(raw).assumingMemoryBound(to: sockaddr_storage.self)
            guard var address = PeerAddress(storage: storage) else { continue }
            if address.isIPv6 && address.high >> 54 == 0x3FA { continue }  // fe80::/10
            address.port = socket.localPort
            if !found.contains(where: { $0.address == address }) {
                found.append((address, e.pointee.ifa_flags & UInt32(IFF_LOOPBACK) != 0))
            }
        }
        let ordered = found.filter { !$0.loopback } + found.filter(\.loopback)
        return ordered.enumerated().map { i, c in Self.hostCandidate(c.address, rank: i) }
    }

    /// The `rank`th host candidate's `a=candidate:` value (RFC 8445 §5.1.2.1: type preference 126, component 1).
    private static func hostCandidate(_ address: PeerAddress, rank: Int) -> String {
        let priority: UInt32 = 126 << 24 | UInt32(65_535 - rank) << 8 | 255
        return "\(rank + 1) 1 udp \(priority) \(address.host) \(address.port) typ host"
    }

    private func point(at address: PeerAddress) {
        pointed = address
        address.write(to: destination, ipv6Socket: socket.isIPv6)
    }

    // MARK: ICE

    /// A check on the selected pair, or on each pair in turn until one answers: from the socket to each candidate
    /// (unless relay-only) and through the relay once allocated. The transaction id says which answered: word 1 the
    /// local candidate (7 the socket's, 8 the relayed one; 9 once selected), word 2 the other end's candidate's index.
    /// Controlling, only the selected pair's checks nominate it (regular nomination; the first goes as it is selected):
    /// a check still on its way through the relay when a direct pair answered must not make an ICE-lite server, which
    /// takes the latest nomination, send there.
    private func sendCheck(now: UInt64) {
        lastCheck = now
        let targets = selected.map { [$0] } ?? candidates
        let direct = selected == nil ? !relayOnly : !selectedViaRelay
        let relayed = relay?.relayed != nil && (selected == nil || selectedViaRelay)
        let role: STUNAttribute = controlling ? .iceControlling(tieBreaker: tieBreaker) : .iceControlled(tieBreaker: tieBreaker)
        var common: [STUNAttribute] = [.username("\(remote.usernameFragment):\(local.usernameFragment)"), role]
        if controlling && selected != nil { common.append(.useCandidate) }
        for (i, target) in targets.enumerated() {
            for through in [false, true] where through ? relayed : direct {
                // The priority a peer-reflexive candidate learnt from this check would have (RFC 8445 §7.1.1).
                let priority: UInt32 = (through ? 0 : 110) << 24 | UInt32(65_535) << 8 | 255
                let attributes = common + [.priority(priority)]
                let request = STUNMessage(
                    type: .bindingRequest,
                    transactionID: STUNTransactionID(word0: UInt32(truncatingIfNeeded: now), word1: selected != nil ? 9 : through ? 8 : 7,
                                                     word2: UInt32(i)),
                    attributes: attributes)
                guard let bytes = try? request.serialize(
                    integrityKey: Array(remote.password.utf8), hmacSHA1: { HMAC.sha1(key: $0, data: $1) }, fingerprint: true) else { continue }
                send(bytes, to: target, viaRelay: through)
            }
        }
    }

    /// Sends `bytes` to `target` from the socket or through the relay, then points back at the pair in use.
    private func send(_ bytes: [UInt8], to target: PeerAddress, viaRelay through: Bool) {
        point(at: target)
        viaRelay = through
        send(bytes)
        restorePoint()
    }

    /// Points at the selected pair, or before one is, at the first candidate the way relay-only says.
    private func restorePoint() {
        viaRelay = selected == nil ? relayOnly : selectedViaRelay
        if let selected { point(at: selected) } else if let first = candidates.first { point(at: first) }
    }

    /// Answers a full ICE agent's checks (RFC 8445 §7.3): a server that is not ICE-lite (Janus's
    /// libnice even in its lite mode) sends triggered checks and nominates only once they succeed; a peer checks
    /// from each of its candidates. The answer goes back where the check came from (`from`, when the owner knows
    /// it; else the candidate in use) the way it came (`throughRelay`: a Data indication), which becomes a candidate of
    /// ours to check (peer reflexive, RFC 8445 §7.3.1.3).
    private func answerCheck(_ request: STUNMessage, bytes: UnsafeRawBufferPointer, from: PeerAddress?, throughRelay: Bool) {
        let key = Array(local.password.utf8)
        guard let source = from ?? selected ?? candidates.first,
              request.verifyIntegrity(in: bytes, key: key, hmacSHA1: { HMAC.sha1(key: $0, data: $1) }) else { return }
        let mapped = source.isIPv6 ? STUNAddress.ipv6(high: source.high, low: source.low, port: source.port)
            : STUNAddress.ipv4(UInt32(truncatingIfNeeded: source.low), port: source.port)
        guard let reply = try? STUNMessage.bindingSuccess(to: request, mappedAddress: mapped).serialize(
            integrityKey: key, hmacSHA1: { HMAC.sha1(key: $0, data: $1) }, fingerprint: true) else { return }
        if from != nil { addCandidate(source) }
        send(reply, to: source, viaRelay: throughRelay || relayOnly)
    }

    private func send(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in _ = send(raw.baseAddress!, length: raw.count) }
    }

    /// Sends one datagram to the other end's candidate in use as it is (through the relay: in a Send indication).
    package func send(_ p: UnsafeRawPointer, length: Int) -> Bool {
        if viaRelay, let relay {
            guard let pointed else { return false }
            sendToRelay(relay.wrap(UnsafeRawBufferPointer(start: p, count: length), to: pointed))
            return true
        }
        return withUnsafePointer(to: destination.pointee) { address in
            address.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                sendto(socket.fd, p, length, Int32(SB_MSG_DONTWAIT), $0,
                       socklen_t(socket.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size))
            }
        } >= 0
    }

    // MARK: Receive

    /// Handles one datagram (from `from`, when the owner read it): STUN and DTLS here, RTP unprotected in place
    /// for the owner.
    package func receive(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64, from: PeerAddress? = nil) -> Received {
        receive(p, length: length, now: now, from: from, throughRelay: false)
    }

    private func receive(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64, from: PeerAddress?, throughRelay: Bool) -> Received {
        guard length > 0 else { return .none }
        let first = Bytes.byte(p, 0)
        if first <= 3 {
            guard let message = try? STUNMessage.parse(UnsafeRawBufferPointer(start: p, count: length)) else { return .none }
            if relay != nil, let from, from == relay?.server.address, message.type.method != .binding {
                // From the TURN server: an answer of its own, or a peer's datagram relayed (handled as if it came
                // straight from the peer).
                guard let outcome = relay?.receive(message, bytes: UnsafeRawBufferPointer(start: p, count: length), now: now) else { return .none }
                for bytes in outcome.send { sendToRelay(bytes) }
                guard let (peer, payload) = outcome.data, !payload.isEmpty, payload.count <= length else { return .none }
                payload.withUnsafeBytes { p.copyMemory(from: $0.baseAddress!, byteCount: payload.count) }
                return receive(p, length: payload.count, now: now, from: peer, throughRelay: true)
            }
            if message.type == .bindingSuccess {
                // An answer to a check is signed with the other end's password (RFC 8445 §7.2.5.2); a forged one is dropped.
                guard message.verifyIntegrity(in: UnsafeRawBufferPointer(start: p, count: length), key: Array(remote.password.utf8),
                                              hmacSHA1: { HMAC.sha1(key: $0, data: $1) }) else { return .none }
                let index = Int(message.transactionID.word2), way = message.transactionID.word1
                if !iceConnected {
                    // The pair the check went on, by the transaction id (and the way the answer came).
                    guard index < candidates.count, way == 7 && !throughRelay || way == 8 && throughRelay else { return .none }
                    selected = candidates[index]
                    selectedViaRelay = way == 8
                    restorePoint()
                    iceConnected = true
                    if controlling { sendCheck(now: now) }
                    if let dtls, dtls.role == .client { for d in dtls.start(now: now) { send(d) } }
                } else if way == 9 {
                    // The answer to a check nominating the selected pair.
                    nominationAnswered = true
                }
            } else if message.type == .bindingRequest {
                answerCheck(message, bytes: UnsafeRawBufferPointer(start: p, count: length), from: from, throughRelay: throughRelay)
            }
        } else if first >= 20 && first <= 63 {
            guard let dtls else { return .none }
            let output = dtls.receive(UnsafeRawBufferPointer(start: p, count: length), now: now)
            for d in output.datagrams { send(d) }
            if let change = output.stateChange { apply(change) }
        } else if first >= 128 && first <= 191, length >= 12 {
            let second = Bytes.byte(p, 1)
            if second >= 192 && second <= 223 { return .rtcp(length: length) }
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
        lastTick = now
        if relay != nil, let out = relay?.tick(now: now) { for bytes in out { sendToRelay(bytes) } }
        guard dtls != nil, !relayOnly || relay?.relayed != nil else { return }
        let interval: UInt64 = iceConnected && (nominationAnswered || !controlling) ? 5_000_000_000 : 100_000_000
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
        "port \(socket.localPort): ICE \(controlling ? "controlling" : "controlled") to \(selected.map { "\($0)\(selectedViaRelay ? " through TURN" : "")" } ?? "\(candidates.count) candidates"), \(iceConnected ? "connected" : "checking"), DTLS \(dtls.map { "\($0.role) \($0.state)" } ?? "not configured")"
    }
}
