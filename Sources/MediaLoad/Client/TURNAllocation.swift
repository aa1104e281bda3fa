import Crypto
import Media
import Wire

/// Where a client's media goes when it may only go through a TURN server (relay-only ICE): the server's address
/// over UDP and the credential for it (the TURN REST API's time-limited one the signaling hands out).
package struct TURNServer: Sendable, Equatable {
    package var address: PeerAddress
    package var username: String
    package var password: String

    package init(address: PeerAddress, username: String, password: String) {
        (self.address, self.username, self.password) = (address, username, password)
    }
}

/// One TURN allocation over UDP (RFC 8656) for one client transport: the allocation with long-term credentials
/// (asked once without, then with the realm and nonce of the 401; a stale nonce renewed), permissions for the
/// peers' addresses, Send indications out and Data indications in, refreshes before they lapse. Pure: it says
/// what to send to the TURN server and reads what comes back; the transport does the I/O.
package struct TURNAllocation {
    package enum State: Equatable {
        case allocating
        case allocated(relayed: PeerAddress)
        case failed(String)
    }

    /// What came back from the TURN server.
    package struct Outcome {
        /// Requests to send to the TURN server now.
        package var send: [[UInt8]] = []
        /// A peer's datagram, relayed.
        package var data: (peer: PeerAddress, payload: [UInt8])?
    }

    private enum Request: Equatable {
        case allocate
        case refresh
        /// A Refresh with LIFETIME 0: the allocation is deleted (RFC 8656 §7).
        case release
        /// Permissions are per IP address (RFC 8656 §9): a peer's port is left as it came.
        case permission(PeerAddress)

        func permits(_ host: String) -> Bool {
            if case .permission(let peer) = self { peer.host == host } else { false }
        }
    }

    package let server: TURNServer
    package private(set) var state: State = .allocating
    private var realm = ""
    private var nonce = ""
    private var key: [UInt8]?
    private var pending: [STUNTransactionID: (request: Request, bytes: [UInt8], sent: UInt64, tries: Int)] = [:]
    /// When each peer address (by IP) was last permitted; the ones asked for before the allocation was made.
    private var permitted: [String: (peer: PeerAddress, at: UInt64)] = [:]
    private var wanted: [PeerAddress] = []
    private var refreshAt: UInt64 = .max
    /// Released: nothing more is sent.
    private var released = false
    private static func newID() -> STUNTransactionID {
        let r = SystemRandom()
        return STUNTransactionID(word0: r.next(), word1: r.next(), word2: r.next())
    }

    /// Requests are sent again this often until answered, at most `maxTries` times.
    static let retransmission: UInt64 = 500_000_000
    static let maxTries = 8
    /// A permission lasts 300 s (RFC 8656 §9); renewed a minute before.
    static let permissionRenewal: UInt64 = 240_000_000_000

    package init(server: TURNServer) {
        self.server = server
    }

    /// The first Allocate (without credentials: the server answers with its realm and a nonce).
    package mutating func start(now: UInt64) -> [UInt8] {
        request(.allocate, now: now)
    }

    package var relayed: PeerAddress? {
        if case .allocated(let relayed) = state { relayed } else { nil }
    }

    /// A permission for `peer`'s address, asked now or once the allocation is made; nil when there is nothing to send.
    package mutating func permit(_ peer: PeerAddress, now: UInt64) -> [UInt8]? {
        guard relayed != nil else {
            if !wanted.contains(peer) { wanted.append(peer) }
            return nil
        }
        guard permitted[peer.host] == nil, !pending.values.contains(where: { $0.request.permits(peer.host) }) else { return nil }
        return request(.permission(peer), now: now)
    }

    /// `payload` for `peer`, as a Send indication.
    package func wrap(_ payload: UnsafeRawBufferPointer, to peer: PeerAddress) -> [UInt8] {
        let id = Self.newID()
        let message = STUNMessage(type: .sendIndication, transactionID: id, attributes: [
            .xorAddress(.xorPeerAddress, peer.stunAddress, transactionID: id), .other(type: .data, value: Array(payload)),
        ])
        return (try? message.serialize()) ?? []
    }

    /// The Refresh that deletes the allocation now (the connection is closing) rather than when its lifetime ends, sent
    /// once without waiting for the answer; nil when there is none. Nothing is sent after it.
    package mutating func release(now: UInt64) -> [UInt8]? {
        guard relayed != nil, !released else { return nil }
        released = true
        pending = [:]
        return request(.release, now: now)
    }

    /// Retransmissions, refreshes and renewed permissions due by `now`.
    package mutating func tick(now: UInt64) -> [[UInt8]] {
        guard !released else { return [] }
        var out: [[UInt8]] = []
        for (id, p) in pending where now &- p.sent >= Self.retransmission {
            if p.tries >= Self.maxTries {
                pending[id] = nil
                if p.request == .allocate { state = .failed("the TURN server did not answer") }
                continue
            }
            pending[id]?.sent = now
            pending[id]?.tries += 1
            out.append(p.bytes)
        }
        guard relayed != nil else { return out }
        if now >= refreshAt {
            refreshAt = .max
            out.append(request(.refresh, now: now))
        }
        for (host, p) in permitted where now &- p.at >= Self.permissionRenewal {
            permitted[host] = nil
            if let bytes = permit(p.peer, now: now) { out.append(bytes) }
        }
        return out
    }

    /// A message from the TURN server (the transport checked where it came from).
    package mutating func receive(_ message: STUNMessage, bytes: UnsafeRawBufferPointer, now: UInt64) -> Outcome {
        var outcome = Outcome()
        if message.type == .dataIndication {
            if let peer = message.xorAddress(.xorPeerAddress), let payload = message.rawValue(.data) { outcome.data = (PeerAddress(peer), payload) }
            return outcome
        }
        guard let asked = pending.removeValue(forKey: message.transactionID) else { return outcome }
        // A success answering an authenticated request carries MESSAGE-INTEGRITY with the same key; a forged one is
        // dropped. Errors are taken as they come (a 438 may carry none; at worst a forged one makes this side ask again).
        if let key, message.type.messageClass == .successResponse,
           !message.verifyIntegrity(in: bytes, key: key, hmacSHA1: { HMAC.sha1(key: $0, data: $1) }) {
            pending[message.transactionID] = asked
            return outcome
        }
        switch message.type.messageClass {
        case .successResponse:
            switch asked.request {
            case .allocate:
                guard let relayed = message.xorAddress(.xorRelayedAddress) else {
                    state = .failed("the TURN server's allocation named no relayed address")
                    return outcome
                }
                state = .allocated(relayed: PeerAddress(relayed))
                scheduleRefresh(message.lifetime, now: now)
                let peers = wanted
                wanted = []
                for peer in peers { if let bytes = permit(peer, now: now) { outcome.send.append(bytes) } }
            case .refresh:
                scheduleRefresh(message.lifetime, now: now)
            case .release:
                break
            case .permission(let peer):
                permitted[peer.host] = (peer, now)
            }
        case .errorResponse:
            let code = message.errorCode?.code ?? 0
            if code == 401 && key == nil || code == 438, let realm = message.realm ?? (code == 438 ? realm : nil), let nonce = message.nonce {
                // The challenge (or a new nonce): ask again with the credential.
                self.realm = realm
                self.nonce = nonce
                key = MD5.hash("\(server.username):\(realm):\(server.password)")
                outcome.send.append(request(asked.request, now: now))
            } else if asked.request == .allocate {
                state = .failed("the TURN server refused the allocation: \(code) \(message.errorCode?.reason ?? "")")
            }
        default:
            pending[message.transactionID] = asked
        }
        return outcome
    }

    private mutating func scheduleRefresh(_ lifetime: UInt32?, now: UInt64) {
        let seconds = UInt64(max(60, lifetime ?? 600))
        refreshAt = now + (seconds - 30) * 1_000_000_000
    }

    /// A request of `kind` (authenticated once the realm is known), recorded for retransmission.
    private mutating func request(_ kind: Request, now: UInt64) -> [UInt8] {
        let id = Self.newID()
        var attributes: [STUNAttribute]
        let type: STUNMessageType
        switch kind {
        case .allocate:
            type = .allocateRequest
            attributes = [.udpTransport]
        case .refresh:
            type = .refreshRequest
            attributes = [.lifetime(600)]
        case .release:
            type = .refreshRequest
            attributes = [.lifetime(0)]
        case .permission(let peer):
            type = .createPermissionRequest
            attributes = [.xorAddress(.xorPeerAddress, peer.stunAddress, transactionID: id)]
        }
        if key != nil { attributes += [.username(server.username), .realm(realm), .nonce(nonce)] }
        let bytes = (try? STUNMessage(type: type, transactionID: id, attributes: attributes).serialize(
            integrityKey: key, hmacSHA1: { HMAC.sha1(key: $0, data: $1) }, fingerprint: true)) ?? []
        pending[id] = (kind, bytes, now, 1)
        return bytes
    }
}
