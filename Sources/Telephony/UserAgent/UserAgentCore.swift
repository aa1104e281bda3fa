import Audio
import Crypto
import Runtime
import Wire

/// The SIP user agent as a sans-I/O engine: datagrams and time in, messages and call events out.
///
/// It screens requests (source allow-list 403, malformed 400 with the reason, 505, 513, 416,
/// unknown methods 501, Max-Forwards 483, unsupported Require 420, non-SDP bodies 415, per-source
/// transaction cap 503), runs the transactions, keeps one dialog per call, answers OPTIONS,
/// CANCEL, BYE, PRACK and re-INVITE/UPDATE (with our SDP), sends early media (183 with SDP, reliably
/// per RFC 3262 when the caller supports 100rel), acknowledges reliable provisionals with PRACK,
/// places outbound calls with a digest retry on 401/407, runs a registrar for devices, and keeps
/// trunks registered and health-checked (`UserAgentCore+Trunks`).
/// Confined to one thread (the shell's event loop).
public final class UserAgentCore {
    public internal(set) var config: UserAgentConfig
    let random: any RandomSource
    var servers: [TransactionKey: (tx: ServerTransaction, peer: SIPPeer)] = [:]
    var clients: [TransactionKey: (tx: ClientTransaction, peer: SIPPeer)] = [:]
    var calls: [CallID: Call] = [:]
    var out: [UserAgentOutput] = []
    var sessionVersion: UInt64 = 1
    /// Devices' registrations; REGISTER is answered 405 without one.
    public var registrar: Registrar?
    /// `H(user:realm:password)` (MD5) of a device user, for the registrar: (realm, username).
    public var deviceCredentials: (@Sendable (_ realm: String, _ username: String) -> String?)?
    /// Trunks by name: registration and health state (`UserAgentCore+Trunks`).
    var trunkStates: [String: TrunkState] = [:]
    /// Which trunk a REGISTER or OPTIONS client transaction belongs to.
    var trunkTransactions: [TransactionKey: String] = [:]
    public private(set) var statistics = SIPStatistics()
    /// Server transactions not yet given a final response, and their count per source host (the
    /// per-source cap counts only these: answered ones linger for retransmissions, not for work).
    var unanswered: Set<TransactionKey> = []
    /// Transaction timers in deadline order (entries checked against the transaction when they surface).
    var timers = DeadlineQueue<TimerOwner>()
    enum TimerOwner: Hashable { case server(TransactionKey), client(TransactionKey) }
    var unansweredBySource: [String: Int] = [:]
    /// INVITE server transactions not yet given a final response, from all sources (overload shedding).
    var unansweredInvites = 0

    static let allowed: [SIPMethod] = [.invite, .ack, .bye, .cancel, .options, .update, .info, .prack, .register]

    struct Call {
        var id: CallID
        var peer: SIPPeer
        var outbound: Bool
        var dialog: Dialog?
        var invite: SIPMessage
        var inviteKey: TransactionKey
        var localTag: String
        var trunk: TrunkConfig?
        var credentials: TrunkConfig.Credentials?
        var authAttempts = 0
        var connected = false
        /// The SDP we sent (answer, early media or offer); re-INVITEs are answered from it.
        var localSDP: SessionDescription?
        /// RFC 3262: the last RSeq we sent (UAS) or acknowledged (UAC).
        var rseq: UInt32 = 0
        var reliable: ReliableProvisional?
        /// Hung up after our 2xx and before its ACK: the BYE waits for the ACK, or for the ACK's time-out
        /// (RFC 3261 §15: the callee MUST NOT send BYE on a confirmed dialog before either).
        var byeWhenAcknowledged = false
    }

    /// A reliable provisional response being retransmitted until its PRACK (RFC 3262 §3).
    struct ReliableProvisional {
        var message: SIPMessage
        var rseq: UInt32
        var interval: Duration
        var next: Instant
        var giveUp: Instant
    }

    public init(config: UserAgentConfig, random: any RandomSource = SystemRandom()) {
        self.config = config
        self.random = random
        for trunk in config.trunks { trunkStates[trunk.name] = TrunkState(config: trunk) }
    }

    public var activeCalls: Int { calls.count }
    public var pendingTransactions: Int { servers.count + clients.count }

    /// The earliest transaction deadline.
    public var nextDeadline: Instant? {
        var all: [Instant] = []
        if let first = validTimer() { all.append(first) }
        all += calls.values.compactMap { $0.reliable?.next }
        all += trunkStates.values.compactMap(\.nextDeadline)
        return all.min()
    }

    /// The INVITE that opened a call (its headers for the application), while the call lasts.
    public func request(for id: CallID) -> SIPMessage? { calls[id]?.invite }

    /// Where a call's signalling goes.
    public func peer(for id: CallID) -> SIPPeer? { calls[id]?.peer }

    /// The trunk a source address belongs to, if any.
    public func trunk(forSource host: String) -> TrunkConfig? { config.trunks.first { $0.accepts(host) } }

    func isAllowed(_ host: String, now: Instant) -> Bool {
        config.isAllowed(host) || (registrar?.isRegistered(host: host, now: now) ?? false)
    }

    // MARK: Input

    /// One datagram (or one framed stream message) from `peer`.
    public func receive(_ bytes: some Collection<UInt8>, from peer: SIPPeer, now: Instant) -> [UserAgentOutput] {
        do {
            let message = try SIPMessage.parse(bytes)
            do {
                try message.validate()
            } catch {
                if message.isRequest, message.method != .ack { reject(message, error.status, error.detail, peer: peer) }
                return flush()
            }
            statistics.record(received: message)
            if message.isRequest {
                receiveRequest(message, from: peer, now: now)
            } else {
                receiveResponse(message, now: now)
            }
        } catch {
            // Unparseable: answer only when enough of a request survives to address a response.
            if let reply = Self.minimalResponse(to: bytes, error: error) { out.append(.send(reply, to: peer)) }
        }
        return flush()
    }

    public func tick(now: Instant) -> [UserAgentOutput] {
        for (id, call) in calls {
            guard var reliable = call.reliable, reliable.next <= now else { continue }
            if now >= reliable.giveUp {
                // No PRACK within 64*T1: the caller cannot be reached reliably (RFC 3262 §3).
                calls[id]?.reliable = nil
                if !call.connected, servers[call.inviteKey] != nil {
                    respond(response(504, to: call.invite, toTag: call.localTag, reason: "no PRACK"), key: call.inviteKey, now: now)
                    calls[id] = nil
                    out.append(.event(.ended(id, status: 504, reason: "no PRACK")))
                }
                continue
            }
            send(reliable.message, peer: call.peer)
            reliable.interval = min(reliable.interval * 2, config.timers.t2)
            reliable.next = now.adding(reliable.interval)
            calls[id]?.reliable = reliable
        }
        tickTrunks(now: now)
        var due: [TimerOwner] = []
        while let first = validTimer(), first <= now, let entry = timers.popFirst() { due.append(entry.owner) }
        for owner in due {
            switch owner {
            case .server(let key):
                guard let entry = servers[key], let deadline = entry.tx.nextDeadline, deadline <= now else { continue }
                var tx = entry.tx
                let actions = tx.tick(now: now)
                servers[key]?.tx = tx
                run(actions, server: key, peer: entry.peer, now: now)
            case .client(let key):
                guard let entry = clients[key], let deadline = entry.tx.nextDeadline, deadline <= now else { continue }
                var tx = entry.tx
                let actions = tx.tick(now: now)
                clients[key]?.tx = tx
                run(actions, client: key, peer: entry.peer, now: now)
            }
        }
        return flush()
    }

    // MARK: Commands

    /// Answers an incoming call with our SDP.
    public func answer(_ id: CallID, sdp: SessionDescription, now: Instant) -> [UserAgentOutput] {
        guard let call = calls[id], !call.outbound else { return [] }
        var ok = response(200, to: call.invite, toTag: call.localTag)
        ok.headers.add(SIPHeaderName.contentType, "application/sdp")
        ok.body = Array(sdp.serialize().utf8)
        if let dialog = try? Dialog.uas(request: call.invite, localTag: call.localTag, confirmed: true) {
            calls[id]?.dialog = dialog
        }
        calls[id]?.localSDP = sdp
        calls[id]?.reliable = nil
        respond(ok, key: call.inviteKey, now: now)
        return flush()
    }

    /// Rings (180) or sends early media (183 with `sdp`) on an incoming call. Sent reliably (RFC 3262)
    /// when the caller supports or requires 100rel: retransmitted until PRACK, with RSeq.
    public func progress(_ id: CallID, status: Int = 183, sdp: SessionDescription? = nil, now: Instant) -> [UserAgentOutput] {
        guard let call = calls[id], !call.outbound, !call.connected, (101...199).contains(status), call.reliable == nil else { return [] }
        var r = response(status, to: call.invite, toTag: call.localTag)
        r.headers.add(SIPHeaderName.contact, contact(for: call.peer))
        if let sdp {
            r.headers.add(SIPHeaderName.contentType, "application/sdp")
            r.body = Array(sdp.serialize().utf8)
            calls[id]?.localSDP = sdp
        }
        let options = call.invite.headers.tokens(SIPHeaderName.supported) + call.invite.headers.tokens(SIPHeaderName.require)
        if options.contains("100rel") {
            let rseq = call.rseq == 0 ? (UInt32(random.hex(2), radix: 16) ?? 0) + 1 : call.rseq + 1
            r.headers.add(SIPHeaderName.require, "100rel")
            r.headers.add(SIPHeaderName.rseq, String(rseq))
            calls[id]?.rseq = rseq
            // Over a stream nothing is retransmitted; the one deadline is the give-up at 64*T1.
            let giveUp = now.adding(config.timers.transactionTimeout)
            calls[id]?.reliable = ReliableProvisional(message: r, rseq: rseq, interval: config.timers.t1,
                                                      next: call.peer.transport.isReliable ? giveUp : now.adding(config.timers.t1),
                                                      giveUp: giveUp)
        }
        if calls[id]?.dialog == nil, let dialog = try? Dialog.uas(request: call.invite, localTag: call.localTag, confirmed: false) {
            calls[id]?.dialog = dialog
        }
        respond(r, key: call.inviteKey, now: now)
        return flush()
    }

    /// Refuses an incoming call (486 busy, 603 decline, 480, ...).
    public func reject(_ id: CallID, status: Int, now: Instant) -> [UserAgentOutput] {
        guard let call = calls[id], !call.outbound else { return [] }
        guard (300...699).contains(status) else { return [] }
        respond(response(status, to: call.invite, toTag: call.localTag), key: call.inviteKey, now: now)
        calls[id] = nil
        out.append(.event(.ended(id, status: status, reason: SIPMessage.reasonPhrase(status))))
        return flush()
    }

    /// Places a call through `trunk` to `to`, from `from`, offering `sdp`.
    public func invite(to: SIPURI, from: SIPAddress, sdp: SessionDescription, trunk: TrunkConfig, headers: [(String, String)] = [],
                       now: Instant) -> (CallID, [UserAgentOutput]) {
        invite(to: to, from: from, sdp: sdp, peer: trunk.peer, trunk: trunk, credentials: trunk.credentials, headers: headers, now: now)
    }

    /// Places a call to `to`, sending the INVITE to `peer` (a trunk, or a registered device's source).
    /// `headers` go into the INVITE as they are (an application's `X-` headers; the caller checks their syntax).
    public func invite(to: SIPURI, from: SIPAddress, sdp: SessionDescription, peer: SIPPeer, trunk: TrunkConfig? = nil,
                       credentials: TrunkConfig.Credentials? = nil, headers extra: [(String, String)] = [],
                       now: Instant) -> (CallID, [UserAgentOutput]) {
        let id = CallID(rawValue: random.hex(12) + "@" + config.host)
        let tag = random.hex(6)
        var fromAddress = from
        fromAddress.tag = tag
        var h = SIPHeaders()
        h.add(SIPHeaderName.maxForwards, "70")
        h.add(SIPHeaderName.from, fromAddress.description)
        h.add(SIPHeaderName.to, SIPAddress(uri: to).description)
        h.add(SIPHeaderName.callID, id.rawValue)
        h.add(SIPHeaderName.cseq, SIPCSeq(1, .invite).description)
        h.add(SIPHeaderName.contact, contact(for: peer))
        h.add(SIPHeaderName.allow, Self.allowed.map(\.rawValue).joined(separator: ", "))
        h.add(SIPHeaderName.supported, "100rel")
        h.add(SIPHeaderName.userAgent, config.userAgent)
        for (name, value) in extra { h.add(name, value) }
        h.add(SIPHeaderName.contentType, "application/sdp")
        var request = SIPMessage.request(.invite, to, headers: h, body: Array(sdp.serialize().utf8))
        // Registered before the transaction starts: a transport failure reported synchronously finds the call.
        calls[id] = Call(id: id, peer: peer, outbound: true, invite: request, inviteKey: .client(branch: "", method: .invite),
                         localTag: tag, trunk: trunk, credentials: credentials, localSDP: sdp)
        let key = startClient(&request, peer: peer, now: now)
        calls[id]?.invite = request
        calls[id]?.inviteKey = key
        return (id, flush())
    }

    /// Ends a call: one we placed with CANCEL before the answer, BYE after; one we received with 480 before
    /// our 200, BYE after its ACK (or the ACK's time-out).
    public func hangup(_ id: CallID, now: Instant) -> [UserAgentOutput] {
        guard let call = calls[id], !call.byeWhenAcknowledged else { return [] }
        if !call.outbound, !call.connected, call.dialog?.state == .confirmed {
            // Answered, not yet acknowledged: ended now for the caller of `hangup`; the BYE goes with the ACK.
            calls[id]?.byeWhenAcknowledged = true
            out.append(.event(.ended(id, status: nil, reason: "hung up")))
        } else if !call.outbound, !call.connected {
            // Not answered (ringing, or early media): a final response ends it, never a BYE on an early dialog.
            return reject(id, status: 480, now: now)
        } else if call.dialog != nil, call.connected {
            sendBye(id, now: now)
            out.append(.event(.ended(id, status: nil, reason: "hung up")))
        } else if call.outbound {
            var h = SIPHeaders()
            if let via = call.invite.headers.values(SIPHeaderName.via).first { h.add(SIPHeaderName.via, via) }
            for name in [SIPHeaderName.maxForwards, SIPHeaderName.from, SIPHeaderName.to, SIPHeaderName.callID] {
                if let v = call.invite.headers[name] { h.add(name, v) }
            }
            let seq = (try? call.invite.cseq().sequence) ?? 1
            h.add(SIPHeaderName.cseq, SIPCSeq(seq, .cancel).description)
            let cancel = SIPMessage.request(.cancel, call.invite.requestURI ?? SIPURI(host: call.peer.host), headers: h)
            if var tx = try? ClientTransaction(request: cancel, reliable: call.peer.transport.isReliable, timers: config.timers) {
                let actions = tx.start(now: now)
                clients[tx.key] = (tx, call.peer)
                run(actions, client: tx.key, peer: call.peer, now: now)
            }
        }
        return flush()
    }

    /// A key sent in a SIP INFO (`application/dtmf-relay`, `InfoDTMF`'s form, lasting `KeyPacing.keyMilliseconds`) inside an established call;
    /// nothing before the call is up.
    public func sendKey(_ id: CallID, _ key: Character, now: Instant) -> [UserAgentOutput] {
        guard let call = calls[id], call.connected, !call.byeWhenAcknowledged, var dialog = call.dialog,
              InfoDTMF.key(String(key)) != nil else { return [] }
        var info = dialog.makeRequest(.info, body: Array("Signal=\(key)\r\nDuration=\(KeyPacing.keyMilliseconds)\r\n".utf8), contentType: "application/dtmf-relay")
        calls[id]?.dialog = dialog
        _ = startClient(&info, peer: call.peer, now: now)
        return flush()
    }

    /// Ends the call's dialog with a BYE and forgets the call.
    private func sendBye(_ id: CallID, now: Instant) {
        guard let call = calls[id], var dialog = call.dialog else { return }
        var bye = dialog.makeRequest(.bye)
        calls[id]?.dialog = dialog
        _ = startClient(&bye, peer: call.peer, now: now)
        calls[id] = nil
    }

    // MARK: Requests

    func receiveRequest(_ request: SIPMessage, from peer: SIPPeer, now: Instant) {
        guard let method = request.method else { return }
        // In-dialog requests from a call's peer are allowed; new ones only from trunks and devices.
        let key: TransactionKey
        do { key = try TransactionKey.server(for: request) } catch { return reject(request, 400, error.detail, peer: peer) }
        // An ACK for our 2xx is the call's, not the INVITE transaction's, even when it reuses the INVITE's branch
        // (as some phones and SIPp's scenarios do): it goes on to the call below.
        if let entry = servers[key], !(method == .ack && entry.tx.state == .accepted) {
            var tx = entry.tx
            let actions = tx.receive(request, now: now)
            servers[key]?.tx = tx
            return run(actions, server: key, peer: peer, now: now)
        }
        if method == .ack {
            // The ACK of a 2xx is its own transaction: route it to the call.
            let id = CallID(rawValue: request.callID ?? "")
            guard var call = calls[id] else { return }
            if let entry = servers[call.inviteKey] {
                var tx = entry.tx
                tx.acknowledge2xx()
                servers[call.inviteKey]?.tx = tx
                noteTimer(.server(call.inviteKey))
            }
            if call.byeWhenAcknowledged {
                sendBye(id, now: now)
            } else if !call.connected {
                call.connected = true
                calls[id] = call
                out.append(.event(.connected(id, remote: Self.sdp(call.invite))))
            }
            return
        }
        guard method == .register || isAllowed(peer.host, now: now) || calls[CallID(rawValue: request.callID ?? "")] != nil else {
            return reject(request, 403, "source not allowed", peer: peer)
        }
        let pending = unansweredBySource[peer.host, default: 0]
        guard pending < config.maxPendingPerSource || (pending < config.maxPendingPerTrunk && trunk(forSource: peer.host) != nil) else { return reject(request, 503, "too many pending transactions", peer: peer) }
        if method == .invite, (try? request.to().tag) == nil, let reason = overload() {
            return shed(request, reason: reason, key: key, peer: peer, now: now)
        }
        guard Self.allowed.contains(method) else {
            var r = response(501, to: request)
            r.headers.add(SIPHeaderName.allow, Self.allowed.map(\.rawValue).joined(separator: ", "))
            return send(r, peer: peer)
        }
        if let mf = try? request.maxForwards(), mf == 0 { return reject(request, 483, "Too Many Hops", peer: peer) }
        let unsupported = request.headers.tokens(SIPHeaderName.require).filter { $0 != "timer" && $0 != "100rel" }
        if !unsupported.isEmpty {
            var r = response(420, to: request)
            r.headers.add(SIPHeaderName.unsupported, unsupported.joined(separator: ", "))
            return send(r, peer: peer)
        }
        if !request.body.isEmpty, method == .invite || method == .update, request.contentType != "application/sdp" {
            var r = response(415, to: request)
            r.headers.add(SIPHeaderName.accept, "application/sdp")
            return send(r, peer: peer)
        }
        guard var tx = try? ServerTransaction(request: request, reliable: peer.transport.isReliable, timers: config.timers) else { return }
        _ = tx.start()
        servers[key] = (tx, peer)
        unanswered.insert(key)
        unansweredBySource[peer.host, default: 0] += 1
        if method == .invite { unansweredInvites += 1 }
        switch method {
        case .options:
            var r = response(200, to: request)
            r.headers.add(SIPHeaderName.allow, Self.allowed.map(\.rawValue).joined(separator: ", "))
            r.headers.add(SIPHeaderName.accept, "application/sdp")
            respond(r, key: key, now: now)
        case .invite:
            receiveInvite(request, key: key, peer: peer, now: now)
        case .register:
            receiveRegister(request, key: key, peer: peer, now: now)
        case .prack:
            let id = CallID(rawValue: request.callID ?? "")
            guard let call = calls[id] else { return respond(response(481, to: request), key: key, now: now) }
            let rack = request.headers[SIPHeaderName.rack]?.split(separator: " ").first.flatMap { UInt32($0) }
            guard let reliable = call.reliable, rack == reliable.rseq else {
                return respond(response(481, to: request, reason: "no such reliable response"), key: key, now: now)
            }
            calls[id]?.reliable = nil
            respond(response(200, to: request), key: key, now: now)
        case .cancel:
            receiveCancel(request, key: key, now: now)
        case .bye:
            let id = CallID(rawValue: request.callID ?? "")
            guard calls[id] != nil else { return respond(response(481, to: request), key: key, now: now) }
            calls[id] = nil
            respond(response(200, to: request), key: key, now: now)
            out.append(.event(.ended(id, status: nil, reason: "BYE")))
        case .update:
            // RFC 3311: with an offer, answered as a re-INVITE's is; without one (a session refresh), 200.
            let id = CallID(rawValue: request.callID ?? "")
            guard calls[id] != nil else { return respond(response(481, to: request), key: key, now: now) }
            var ok = response(200, to: request)
            if let offer = Self.sdp(request) {
                guard let answer = answerReoffer(offer, id: id) else { return respond(response(488, to: request), key: key, now: now) }
                ok.body = Array(answer.serialize().utf8)
                ok.headers.add(SIPHeaderName.contentType, "application/sdp")
            }
            respond(ok, key: key, now: now)
        case .info:
            let id = CallID(rawValue: request.callID ?? "")
            guard calls[id] != nil else { return respond(response(481, to: request), key: key, now: now) }
            switch InfoDTMF.read(contentType: request.contentType, body: request.body) {
            case .digit(let pressed): out.append(.event(.digit(id, pressed)))
            case .malformed: return respond(response(400, to: request, reason: "Bad DTMF"), key: key, now: now)
            case .other: break
            }
            respond(response(200, to: request), key: key, now: now)
        default:
            respond(response(501, to: request), key: key, now: now)
        }
    }

    /// Whether a new INVITE must be shed now, and why.
    func overload() -> OverloadReason? {
        if config.maxCalls > 0, calls.count >= config.maxCalls { return .calls }
        if unansweredInvites >= config.maxPendingInvites { return .pending }
        return nil
    }

    /// Refuses a new INVITE with `503` and `Retry-After` (RFC 3261 §21.5.4) before any call state exists.
    /// Statefully, so the caller's retransmissions get the same 503 from the transaction and its ACK is
    /// absorbed, at the cost of a transaction that lingers a few seconds (no call, no handler, no store).
    func shed(_ request: SIPMessage, reason: OverloadReason, key: TransactionKey, peer: SIPPeer, now: Instant) {
        statistics.shed[reason, default: 0] += 1
        var r = response(503, to: request, toTag: random.hex(6), reason: "Service Unavailable")
        r.headers.add(SIPHeaderName.retryAfter, String(config.retryAfterSeconds))
        guard var tx = try? ServerTransaction(request: request, reliable: peer.transport.isReliable, timers: config.timers) else {
            return send(r, peer: peer)
        }
        _ = tx.start()
        servers[key] = (tx, peer)
        let actions = tx.respond(r, now: now)
        servers[key]?.tx = tx
        run(actions, server: key, peer: peer, now: now)
    }

    func receiveInvite(_ request: SIPMessage, key: TransactionKey, peer: SIPPeer, now: Instant) {
        let id = CallID(rawValue: request.callID ?? "")
        respond(response(100, to: request), key: key, now: now)
        if let existing = calls[id], let toTag = try? request.to().tag, toTag == existing.localTag {
            // re-INVITE: answer with our current session, mirrored direction for hold/resume.
            var ok = response(200, to: request, toTag: existing.localTag)
            if var dialog = existing.dialog {
                do { try dialog.receive(request) } catch { return respond(response(500, to: request), key: key, now: now) }
                calls[id]?.dialog = dialog
            }
            if let offer = Self.sdp(request) {
                if let answer = answerReoffer(offer, id: id) { ok.body = Array(answer.serialize().utf8) }
            } else if let local = existing.localSDP {
                // An offerless re-INVITE: we offer our current session; the ACK carries the answer.
                ok.body = Array(local.serialize().utf8)
            }
            ok.headers.add(SIPHeaderName.contentType, "application/sdp")
            calls[id]?.invite = request
            calls[id]?.inviteKey = key
            respond(ok, key: key, now: now)
            return
        }
        guard calls[id] == nil, let from = try? request.from(), let to = try? request.to() else {
            return respond(response(482, to: request), key: key, now: now)
        }
        let tag = random.hex(6)
        calls[id] = Call(id: id, peer: peer, outbound: false, invite: request, inviteKey: key, localTag: tag)
        out.append(.event(.incomingCall(id, from: from, to: to, offer: Self.sdp(request))))
    }

    func receiveCancel(_ request: SIPMessage, key: TransactionKey, now: Instant) {
        // The INVITE the CANCEL targets has the same branch and method INVITE (§9.2).
        guard case .rfc3261(let branch, let sentBy, _) = key,
              let inviteEntry = servers[.rfc3261(branch: branch, sentBy: sentBy, method: .invite)] else {
            return respond(response(481, to: request), key: key, now: now)
        }
        respond(response(200, to: request), key: key, now: now)
        let inviteKey = TransactionKey.rfc3261(branch: branch, sentBy: sentBy, method: .invite)
        let id = CallID(rawValue: request.callID ?? "")
        if inviteEntry.tx.lastResponse.map({ ($0.status ?? 0) < 200 }) ?? true {
            respond(response(487, to: inviteEntry.tx.request, toTag: calls[id]?.localTag), key: inviteKey, now: now)
            calls[id] = nil
            out.append(.event(.ended(id, status: 487, reason: "cancelled")))
        }
    }

    // MARK: Responses

    func receiveResponse(_ message: SIPMessage, now: Instant) {
        guard let key = try? TransactionKey.client(for: message) else { return }
        guard let entry = clients[key] else {
            // A 2xx retransmission after the transaction ended: acknowledge it again.
            if let status = message.status, status >= 200, status < 300, let cseq = try? message.cseq(), cseq.method == .invite,
               let call = calls[CallID(rawValue: message.callID ?? "")], let dialog = call.dialog {
                ackSuccess(dialog: dialog, sequence: cseq.sequence, peer: call.peer)
            }
            return
        }
        var tx = entry.tx
        let actions = tx.receive(message, now: now)
        clients[key]?.tx = tx
        run(actions, client: key, peer: entry.peer, now: now)
    }

    func deliverResponse(_ message: SIPMessage, request: SIPMessage, now: Instant) {
        guard request.method == .invite, let status = message.status else { return }
        let id = CallID(rawValue: message.callID ?? "")
        guard var call = calls[id] else { return }
        switch status {
        case 100:
            break
        case 101...199:
            if message.headers.tokens(SIPHeaderName.require).contains("100rel"),
               let rseq = message.headers[SIPHeaderName.rseq].flatMap({ UInt32(Substring($0).trimmingSpaces) }) {
                // RFC 3262 §4: acknowledge each new reliable provisional once, in the early dialog.
                guard rseq > call.rseq else { return }
                guard var dialog = call.dialog ?? (try? Dialog.uac(request: request, response: message)) else { return }
                var prack = dialog.makeRequest(.prack)
                let cseq = (try? request.cseq().sequence) ?? 1
                prack.headers.add(SIPHeaderName.rack, "\(rseq) \(cseq) INVITE")
                call.dialog = dialog
                call.rseq = rseq
                calls[id] = call
                _ = startClient(&prack, peer: call.peer, now: now)
            }
            if let answer = Self.sdp(message), let offer = calls[id]?.localSDP { calls[id]?.localSDP = Self.settled(offer, by: answer) }
            out.append(.event(.progress(id, status: status, answer: Self.sdp(message))))
        case 200...299:
            guard var dialog = call.dialog ?? (try? Dialog.uac(request: request, response: message)) else { return }
            if dialog.state == .early { dialog.update(with: message) }
            call.dialog = dialog
            if let answer = Self.sdp(message) { call.localSDP = call.localSDP.map { Self.settled($0, by: answer) } }
            let sequence = (try? message.cseq().sequence) ?? 1
            ackSuccess(dialog: dialog, sequence: sequence, peer: call.peer)
            if !call.connected {
                call.connected = true
                out.append(.event(.connected(id, remote: Self.sdp(message))))
            }
            calls[id] = call
        case 401, 407:
            let header = status == 401 ? SIPHeaderName.wwwAuthenticate : SIPHeaderName.proxyAuthenticate
            guard call.authAttempts < 2, let credentials = call.credentials, let value = message.headers[header],
                  let challenge = try? DigestChallenge.parse(value),
                  let answer = try? DigestCredentials.answer(challenge, username: credentials.username, password: credentials.password,
                                                             method: .invite, uri: request.requestURI?.description ?? "",
                                                             cnonce: random.hex(8)) else {
                calls[id] = nil
                out.append(.event(.ended(id, status: status, reason: message.reason ?? "")))
                return
            }
            var retry = request
            retry.headers.set(status == 401 ? SIPHeaderName.authorization : SIPHeaderName.proxyAuthorization, answer.description)
            let sequence = ((try? request.cseq().sequence) ?? 1) + 1
            retry.headers.set(SIPHeaderName.cseq, SIPCSeq(sequence, .invite).description)
            retry.headers.remove(SIPHeaderName.via)
            call.authAttempts += 1
            call.inviteKey = startClient(&retry, peer: call.peer, now: now)
            call.invite = retry
            calls[id] = call
        default:
            calls[id] = nil
            out.append(.event(.ended(id, status: status, reason: message.reason ?? "")))
        }
    }

    func ackSuccess(dialog: Dialog, sequence: UInt32, peer: SIPPeer) {
        var ack = dialog.ack(sequence: sequence)
        ack.headers.prepend(SIPHeaderName.via, via(branch: SIPVia.magicCookie + random.hex(8), transport: peer.transport))
        send(ack, peer: peer)
    }

    // MARK: Plumbing

    func contact(for peer: SIPPeer) -> String {
        let host = IPEndpoint.reference(config.host)
        let port = config.port(for: peer.transport)
        return peer.transport == .udp ? "<sip:switchboard@\(host):\(port)>"
            : "<sip:switchboard@\(host):\(port);transport=\(peer.transport.rawValue.lowercased())>"
    }

    func via(branch: String, transport: SIPTransportKind) -> String {
        "SIP/2.0/\(transport.rawValue) \(IPEndpoint.reference(config.host)):\(config.port(for: transport));branch=\(branch);rport"
    }

    func nextSessionVersion() -> UInt64 {
        sessionVersion += 1
        return sessionVersion
    }

    /// A peer's offer inside the call (re-INVITE, or UPDATE): reported, and answered with our session as it stands
    /// (`reanswer`), which becomes our session; nil when we have none to answer with.
    private func answerReoffer(_ offer: SessionDescription, id: CallID) -> SessionDescription? {
        out.append(.event(.updated(id, remote: offer)))
        guard let local = calls[id]?.localSDP else { return nil }
        let answer = Self.reanswer(local, to: offer, version: nextSessionVersion())
        calls[id]?.localSDP = answer
        return answer
    }

    /// Our answer to a re-INVITE offer: our current session, its version bumped, its direction mirrored from the
    /// offer (hold: sendonly → recvonly, inactive stays inactive; RFC 3264 §8.4), its codec the one the leg goes on
    /// with (`PlainRTPNegotiator.reofferedCodec`, at the offer's payload types, with telephone-event if offered),
    /// and our SDES line tagged as the offer's line of its suite.
    static func reanswer(_ local: SessionDescription, to offer: SessionDescription, version: UInt64) -> SessionDescription {
        var answer = local
        if var origin = answer.origin {
            origin.sessionVersion = max(origin.sessionVersion + 1, version)
            answer.origin = origin
        }
        let offered = try? PlainRTPNegotiator.read(offer)
        for i in answer.media.indices where answer.media[i].kind == "audio" {
            answer.media[i].direction = PlainRTPNegotiator.answerDirection(offered: offered?.direction ?? .sendrecv, local: .sendrecv)
            guard let offered else { continue }
            if let voice = PlainRTPNegotiator.codecs(of: answer.media[i]).first(where: { $0.0 != .telephoneEvent }),
               let chosen = PlainRTPNegotiator.reofferedCodec(current: voice.0, offered: offered.codecs) {
                let events = offered.codecs.first { $0.0 == .telephoneEvent }
                PlainRTPNegotiator.setCodecs([chosen] + (events.map { [$0] } ?? []), of: &answer.media[i])
            }
            let ours = answer.media[i].attributeValues("crypto").compactMap(SDPCrypto.init(attributeValue:))
            if !ours.isEmpty {
                let lines = ours.map { line in
                    var line = line
                    if let profile = SRTPProfile(sdesSuite: line.suite) { line.tag = SDESKeying.reoffered(offered.crypto, profile: profile)?.tag ?? line.tag }
                    return line.attributeValue
                }
                answer.media[i].removeAttributes(named: "crypto")
                for line in lines { answer.media[i].addAttribute("crypto", line) }
            }
        }
        return answer
    }

    /// Our offer once answered, as the session stands: its codecs narrowed to those the answer kept, its SDES lines
    /// to the one it accepted, and an `a=setup:actpass` (DTLS-SRTP) become the role the answer left us (RFC 5763
    /// §5) — so that a re-INVITE is answered with the session the call has, not with the choices it had.
    static func settled(_ offer: SessionDescription, by answer: SessionDescription) -> SessionDescription {
        var settled = offer
        for i in settled.media.indices {
            guard let answered = answer.media.first(where: { $0.kind == settled.media[i].kind }) else { continue }
            switch settled.media[i].setup == .actpass ? answered.setup ?? answer.setup : nil {
            case .active?: settled.media[i].setup = .passive
            case .passive?: settled.media[i].setup = .active
            default: break
            }
            guard settled.media[i].kind == "audio" else { continue }
            let answeredCodecs = PlainRTPNegotiator.codecs(of: answered).map(\.0)
            let kept = PlainRTPNegotiator.codecs(of: settled.media[i]).filter { answeredCodecs.contains($0.0) }
            if !kept.isEmpty { PlainRTPNegotiator.setCodecs(kept, of: &settled.media[i]) }
            let accepted = Set(answered.attributeValues("crypto").compactMap(SDPCrypto.init(attributeValue:)).map(\.tag))
            let ours = settled.media[i].attributeValues("crypto")
            if !accepted.isEmpty {
                settled.media[i].removeAttributes(named: "crypto")
                for line in ours where SDPCrypto(attributeValue: line).map({ accepted.contains($0.tag) }) == true {
                    settled.media[i].addAttribute("crypto", line)
                }
            }
        }
        return settled
    }

    /// Adds our Via and starts a client transaction for `request`.
    func startClient(_ request: inout SIPMessage, peer: SIPPeer, now: Instant) -> TransactionKey {
        request.headers.prepend(SIPHeaderName.via, via(branch: SIPVia.magicCookie + random.hex(8), transport: peer.transport))
        guard var tx = try? ClientTransaction(request: request, reliable: peer.transport.isReliable, timers: config.timers) else {
            return .client(branch: "", method: request.method ?? .invite)
        }
        let actions = tx.start(now: now)
        clients[tx.key] = (tx, peer)
        run(actions, client: tx.key, peer: peer, now: now)
        return tx.key
    }

    func respond(_ response: SIPMessage, key: TransactionKey, now: Instant) {
        guard var entry = servers[key] else { return }
        if (response.status ?? 0) >= 200 { answered(key, host: entry.peer.host) }
        let actions = entry.tx.respond(response, now: now)
        servers[key] = entry
        run(actions, server: key, peer: entry.peer, now: now)
    }

    func run(_ actions: [TransactionAction], server key: TransactionKey, peer: SIPPeer, now: Instant) {
        defer { noteTimer(.server(key)) }
        for action in actions {
            switch action {
            case .send(let m): send(m, peer: peer)
            case .deliver: break
            case .timeout:
                // No ACK for our final response: the call cannot be up.
                if let request = servers[key]?.tx.request, request.method == .invite {
                    let id = CallID(rawValue: request.callID ?? "")
                    if let call = calls[id], call.byeWhenAcknowledged {
                        sendBye(id, now: now)  // already ended for its owner
                    } else if let call = calls[id], !call.connected {
                        calls[id] = nil
                        out.append(.event(.ended(id, status: 408, reason: "no ACK")))
                    }
                }
            case .terminated:
                if let host = servers[key]?.peer.host { answered(key, host: host) }
                servers[key] = nil
            }
        }
    }

    func run(_ actions: [TransactionAction], client key: TransactionKey, peer: SIPPeer, now: Instant) {
        defer { noteTimer(.client(key)) }
        for action in actions {
            switch action {
            case .send(let m): send(m, peer: peer)
            case .deliver(let m):
                if let trunk = trunkTransactions[key] {
                    trunkResponse(m, trunk: trunk, key: key, now: now)
                } else if let request = clients[key]?.tx.request {
                    deliverResponse(m, request: request, now: now)
                }
            case .timeout:
                if let trunk = trunkTransactions[key] { trunkTimeout(trunk: trunk, key: key, now: now) }
                if let request = clients[key]?.tx.request, request.method == .invite {
                    let id = CallID(rawValue: request.callID ?? "")
                    if calls[id]?.inviteKey == key {
                        calls[id] = nil
                        out.append(.event(.ended(id, status: 408, reason: "no answer")))
                    }
                }
            case .terminated:
                clients[key] = nil
                trunkTransactions[key] = nil
            }
        }
    }

    /// The earliest queued timer that still matches its transaction; stale entries are dropped.
    func validTimer() -> Instant? {
        while let first = timers.first {
            let actual: Instant? = switch first.owner {
            case .server(let key): servers[key]?.tx.nextDeadline
            case .client(let key): clients[key]?.tx.nextDeadline
            }
            if actual == first.deadline { return first.deadline }
            timers.popFirst()
            // The transaction's timers moved without being queued again (e.g. the ACK stopped 2xx retransmits).
            if let actual { timers.push(actual, first.owner) }
        }
        return nil
    }

    /// Queues a transaction's current deadline after its timers may have changed.
    func noteTimer(_ owner: TimerOwner) {
        let deadline: Instant? = switch owner {
        case .server(let key): servers[key]?.tx.nextDeadline
        case .client(let key): clients[key]?.tx.nextDeadline
        }
        if let deadline { timers.push(deadline, owner) }
    }

    func answered(_ key: TransactionKey, host: String) {
        guard unanswered.remove(key) != nil else { return }
        if key.method == .invite { unansweredInvites -= 1 }
        let left = unansweredBySource[host, default: 1] - 1
        unansweredBySource[host] = left > 0 ? left : nil
    }

    func send(_ message: SIPMessage, peer: SIPPeer) {
        statistics.record(sent: message)
        out.append(.send(message, to: peer))
    }

    func reject(_ request: SIPMessage, _ status: Int, _ reason: String, peer: SIPPeer) {
        send(response(status, to: request, reason: reason), peer: peer)
    }

    func flush() -> [UserAgentOutput] {
        defer { out.removeAll(keepingCapacity: true) }
        return out
    }

    /// A response copying Via, From, To, Call-ID, CSeq (§8.2.6.2); `toTag` added when set and absent.
    func response(_ status: Int, to request: SIPMessage, toTag: String? = nil, reason: String? = nil) -> SIPMessage {
        var h = SIPHeaders()
        for v in request.headers.values(SIPHeaderName.via) { h.add(SIPHeaderName.via, v) }
        for name in [SIPHeaderName.from, SIPHeaderName.to, SIPHeaderName.callID, SIPHeaderName.cseq] {
            guard var v = request.headers[name] else { continue }
            if name == SIPHeaderName.to, status > 100, let toTag, var to = try? SIPAddress.parse(v), to.tag == nil {
                to.tag = toTag
                v = to.description
            }
            h.add(name, v)
        }
        if status >= 200 && status < 300 && request.method == .invite {
            let transport = (try? request.topVia().transport).flatMap { SIPTransportKind(name: $0) } ?? .udp
            h.add(SIPHeaderName.contact, contact(for: SIPPeer(host: config.host, port: config.port, transport: transport)))
        }
        h.add(SIPHeaderName.server, config.userAgent)
        return .response(status, reason, headers: h)
    }

    static func sdp(_ message: SIPMessage) -> SessionDescription? {
        guard !message.body.isEmpty, message.contentType == "application/sdp" else { return nil }
        return try? SessionDescription.parse(message.body)
    }

    /// The 400/505/513 for bytes that did not parse, when Via, From, To, Call-ID and CSeq can
    /// still be read from them (RFC 3261 §8.2.6.2 needs them to address the response).
    static func minimalResponse(to bytes: some Collection<UInt8>, error: SIPParseError) -> SIPMessage? {
        let text = String(decoding: bytes.prefix(65_535), as: UTF8.self)
        guard !text.hasPrefix("SIP/") else { return nil }
        var h = SIPHeaders()
        let lines = text.split(separator: "\r\n", omittingEmptySubsequences: false).dropFirst()
        for line in lines {
            if line.isEmpty { break }
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = SIPHeaderName.canonical(line[..<colon].trimmingCharacters())
            let value = String(line[line.index(after: colon)...].trimmingCharacters())
            if [SIPHeaderName.via, SIPHeaderName.from, SIPHeaderName.to, SIPHeaderName.callID, SIPHeaderName.cseq].contains(name) {
                h.add(name, value)
            }
        }
        guard h.contains(SIPHeaderName.via), h.contains(SIPHeaderName.callID), h.contains(SIPHeaderName.cseq) else { return nil }
        return .response(error.status, error.detail, headers: h)
    }
}

extension Substring {
    fileprivate func trimmingCharacters() -> Substring {
        var s = self
        while s.first == " " || s.first == "\t" { s.removeFirst() }
        while s.last == " " || s.last == "\t" { s.removeLast() }
        return s
    }
}
