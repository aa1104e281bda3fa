import Crypto
import Runtime
import Wire

/// Trunks (outbound registration with digest, refreshed before expiry; OPTIONS health checks) and
/// the registrar for devices.
extension UserAgentCore {
    /// Seconds a trunk registration asks for.
    static let registrationExpiry = 300
    /// Seconds before retrying a failed registration.
    static let registrationRetry = 30

    /// Replaces the trunk list (from the store); unchanged trunks keep their state.
    public func updateTrunks(_ trunks: [TrunkConfig], now: Instant) -> [UserAgentOutput] {
        config.trunks = trunks
        var states: [String: TrunkState] = [:]
        for trunk in trunks {
            if let existing = trunkStates[trunk.name], existing.config == trunk {
                states[trunk.name] = existing
            } else {
                states[trunk.name] = TrunkState(config: trunk)
            }
        }
        trunkStates = states
        tickTrunks(now: now)
        return flush()
    }

    /// The trunks' current status, by name.
    public var trunkStatuses: [TrunkStatus] { trunkStates.values.map(\.status).sorted { $0.name < $1.name } }

    /// Replaces the static device hosts allowed besides registered ones.
    public func updateDevices(_ hosts: [String]) { config.devices = hosts }

    func tickTrunks(now: Instant) {
        for name in trunkStates.keys.sorted() {
            guard var state = trunkStates[name] else { continue }
            if let due = state.nextPing, due <= now {
                state.nextPing = nil
                trunkStates[name] = state
                var options = trunkRequest(.options, state: &state)
                let key = startClient(&options, peer: state.config.peer, now: now)
                trunkTransactions[key] = name
                state = trunkStates[name] ?? state
            }
            if let due = state.nextRegister, due <= now {
                state.nextRegister = nil
                state.registerAuthAttempts = 0
                state.registerSequence += 1
                var register = trunkRequest(.register, state: &state)
                trunkStates[name] = state
                let key = startClient(&register, peer: state.config.peer, now: now)
                trunkTransactions[key] = name
                state = trunkStates[name] ?? state
            }
            trunkStates[name] = state
        }
    }

    /// An OPTIONS or REGISTER to the trunk (the REGISTER in its own Call-ID, CSeq rising).
    func trunkRequest(_ method: SIPMethod, state: inout TrunkState) -> SIPMessage {
        let trunk = state.config
        let target = SIPURI(host: IPEndpoint.reference(trunk.host), port: trunk.port)
        let user = trunk.credentials?.username ?? "switchboard"
        var address = SIPAddress(uri: SIPURI(user: user, host: IPEndpoint.reference(trunk.host)))
        var h = SIPHeaders()
        h.add(SIPHeaderName.maxForwards, "70")
        h.add(SIPHeaderName.to, address.description)
        address.tag = random.hex(6)
        h.add(SIPHeaderName.from, address.description)
        if method == .register {
            if state.registerCallID.isEmpty { state.registerCallID = random.hex(12) + "@" + config.host }
            h.add(SIPHeaderName.callID, state.registerCallID)
            h.add(SIPHeaderName.cseq, SIPCSeq(state.registerSequence, .register).description)
            h.add(SIPHeaderName.contact, contact(for: trunk.peer))
            h.add(SIPHeaderName.expires, String(Self.registrationExpiry))
        } else {
            h.add(SIPHeaderName.callID, random.hex(12) + "@" + config.host)
            h.add(SIPHeaderName.cseq, SIPCSeq(1, .options).description)
            h.add(SIPHeaderName.accept, "application/sdp")
        }
        h.add(SIPHeaderName.userAgent, config.userAgent)
        return .request(method, target, headers: h)
    }

    func trunkResponse(_ message: SIPMessage, trunk name: String, key: TransactionKey, now: Instant) {
        guard var state = trunkStates[name], let status = message.status, status >= 200,
              let request = clients[key]?.tx.request else { return }
        let before = state.status
        if request.method == .options {
            state.status.up = status != 503
            if state.config.healthInterval > 0 { state.nextPing = now.adding(.seconds(state.config.healthInterval)) }
        } else if request.method == .register {
            state.status.up = true
            switch status {
            case 200...299:
                let fromContact = (try? message.contacts())?.compactMap { $0.parameters["expires"].flatMap { Int($0) } }.first
                let expires = fromContact ?? message.headers[SIPHeaderName.expires].flatMap { Int(Substring($0).trimmingSpaces) }
                    ?? Self.registrationExpiry
                state.status.registration = .registered(expiresIn: expires)
                // Refresh well before expiry: at half the granted time, at least a second from now.
                state.nextRegister = now.adding(.seconds(max(1, expires / 2)))
            case 401, 407:
                let header = status == 401 ? SIPHeaderName.wwwAuthenticate : SIPHeaderName.proxyAuthenticate
                if state.registerAuthAttempts < 2, let credentials = state.config.credentials, let value = message.headers[header],
                   let challenge = try? DigestChallenge.parse(value),
                   let answer = try? DigestCredentials.answer(challenge, username: credentials.username, password: credentials.password,
                                                              method: .register, uri: request.requestURI?.description ?? "",
                                                              cnonce: random.hex(8)) {
                    state.registerAuthAttempts += 1
                    state.registerSequence += 1
                    var retry = request
                    retry.headers.remove(SIPHeaderName.via)
                    retry.headers.set(SIPHeaderName.cseq, SIPCSeq(state.registerSequence, .register).description)
                    retry.headers.set(status == 401 ? SIPHeaderName.authorization : SIPHeaderName.proxyAuthorization, answer.description)
                    trunkStates[name] = state
                    let retryKey = startClient(&retry, peer: state.config.peer, now: now)
                    trunkTransactions[retryKey] = name
                    return
                }
                state.status.registration = .failed(status: status)
                state.nextRegister = now.adding(.seconds(Self.registrationRetry))
            default:
                state.status.registration = .failed(status: status)
                state.nextRegister = now.adding(.seconds(Self.registrationRetry))
            }
        }
        trunkStates[name] = state
        if state.status != before { out.append(.trunk(state.status)) }
    }

    func trunkTimeout(trunk name: String, key: TransactionKey, now: Instant) {
        guard var state = trunkStates[name], let request = clients[key]?.tx.request else { return }
        let before = state.status
        state.status.up = false
        if request.method == .register {
            state.status.registration = .failed(status: 408)
            state.nextRegister = now.adding(.seconds(Self.registrationRetry))
        } else if state.config.healthInterval > 0 {
            state.nextPing = now.adding(.seconds(state.config.healthInterval))
        }
        trunkStates[name] = state
        if state.status != before { out.append(.trunk(state.status)) }
    }

    /// Registrar: authenticated REGISTER from a device (allowed from any source; the digest is the check).
    func receiveRegister(_ request: SIPMessage, key: TransactionKey, peer: SIPPeer, now: Instant) {
        guard var registrar, let lookup = deviceCredentials else {
            var r = response(405, to: request)
            r.headers.add(SIPHeaderName.allow, Self.allowed.filter { $0 != .register }.map(\.rawValue).joined(separator: ", "))
            return respond(r, key: key, now: now)
        }
        let decision = registrar.register(request, from: peer, now: now, ha1: lookup)
        self.registrar = registrar
        var r = response(decision.status, to: request, toTag: random.hex(6), reason: decision.reason)
        for header in decision.headers { r.headers.add(header.name, header.value) }
        // Kept before the 200 goes out: an acknowledged registration survives a restart.
        if let aor = decision.aor { out.append(.bindings(aor: aor, registrar.lookup(aor, now: now))) }
        respond(r, key: key, now: now)
    }

    /// Sends an in-flight transport failure up: client transactions to `peer` fail at once (RFC 3261 §8.1.3.1).
    public func transportFailed(to peer: SIPPeer, now: Instant) -> [UserAgentOutput] {
        for (key, entry) in clients where entry.peer == peer {
            var tx = entry.tx
            let actions = tx.transportFailed()
            clients[key]?.tx = tx
            run(actions, client: key, peer: peer, now: now)
        }
        return flush()
    }
}
