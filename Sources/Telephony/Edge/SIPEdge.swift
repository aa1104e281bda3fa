import Dispatch
import Glibc
import Crypto
import Runtime
import Synchronization
import Wire

/// The telephony edge of the server: the SIP endpoint on its own loop, screening sources against
/// trunks and registered devices, routing INVITEs to numbers, registering devices, placing calls.
///
/// Inbound: an INVITE from a trunk to a number no account owns is 404; while no `IncomingCallHandler`
/// is set, 480; otherwise it is offered to the handler as an `IncomingCall` (which answers 480 itself
/// for a number with no voice application). Outbound: `placeCall` (through a trunk) and `callUser` (to a
/// registered device) return an `OutboundCall` whose events follow the call.
public final class SIPEdge: Sendable {
    public let loop = EventLoop()
    /// Whether the loop runs (started, not stopped): a job submitted to a loop that never started, or that
    /// stopped, would wait forever, so calls are refused (`EdgeError.stopped`) instead.
    private let running = Atomic<Bool>(false)
    public let directory: any TelephonyDirectory
    let config: UserAgentConfig
    let tcp: Bool
    let tls: SIPTLSConfig?
    let endpoint = Mutex<SIPEndpoint?>(nil)
    let boundTLSPort = Mutex<UInt16?>(nil)
    let handler = Mutex<(any IncomingCallHandler)?>(nil)
    let streams = Mutex<[CallID: AsyncStream<CallEvent>.Continuation]>([:])
    let trunkObservers = Mutex<[@Sendable (TrunkStatus) -> Void]>([])

    /// With `tls`, SIP over TLS listens on its port besides UDP and TCP on the SIP port.
    public init(config: UserAgentConfig, tcp: Bool = true, tls: SIPTLSConfig? = nil, directory: any TelephonyDirectory) {
        self.config = config
        self.tcp = tcp
        self.tls = tls
        self.directory = directory
    }

    /// Binds the sockets on the edge's own loop thread; returns the bound port. `tls` (else the one given at
    /// init) adds SIP over TLS.
    public func start(tls: SIPTLSConfig? = nil) async throws -> UInt16 {
        let tls = tls ?? self.tls
        loop.startThread(name: "sip")
        do {
            return try await loop.submit { [self] in
                let ep = try SIPEndpoint(loop: loop, config: config, tcp: tcp, tls: tls) { [unowned self] ep, event in self.handle(event, on: ep) }
                var registrar = Registrar(secret: SystemRandom().bytes(32))
                let directory = self.directory
                registrar.restore(directory.savedBindings().compactMap(Self.binding), now: .now())
                ep.core.registrar = registrar
                ep.core.deviceCredentials = { realm, username in directory.deviceHA1(realm: realm, username: username) }
                ep.onBindings = { aor, list in directory.saveBindings(aor: aor, list.map(Self.saved)) }
                ep.onTrunk = { [unowned self] _, status in for o in self.trunkObservers.withLock({ $0 }) { o(status) } }
                ep.updateTrunks(config.trunks)
                endpoint.withLock { $0 = ep }
                boundTLSPort.withLock { $0 = ep.tlsPort }
                running.store(true, ordering: .releasing)
                return ep.port
            }
        } catch {
            loop.stop()
            throw error
        }
    }

    /// Closes the sockets (calls in progress are abandoned) and stops the loop.
    public func stop() async {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        _ = try? await loop.submit { [self] in
            endpoint.withLock { $0 }?.close()
            endpoint.withLock { $0 = nil }
        }
        for c in streams.withLock({ s in defer { s.removeAll() }; return Array(s.values) }) { c.finish() }
        loop.stop()
    }

    /// A binding as stored, its expiry moved from this process's monotonic clock to the wall clock.
    static func saved(_ b: Binding) -> SavedBinding {
        let now = Instant.now()
        let left = b.expires > now ? Int64((b.expires.nanoseconds - now.nanoseconds) / 1_000_000) : 0
        return SavedBinding(aor: b.aor, contact: b.contact.description, sourceHost: b.source.host, sourcePort: b.source.port,
                            transport: b.source.transport.rawValue, expiresAtMillis: wallMillis() + left, callID: b.callID, sequence: b.sequence)
    }

    /// A stored binding back on this process's clock; nil when it no longer parses or has expired.
    static func binding(_ s: SavedBinding) -> Binding? {
        let left = s.expiresAtMillis - wallMillis()
        guard left > 0, let contact = try? SIPURI.parse(s.contact), let transport = SIPTransportKind(name: s.transport) else { return nil }
        return Binding(aor: s.aor, contact: contact, source: SIPPeer(host: s.sourceHost, port: s.sourcePort, transport: transport),
                       expires: Instant.now().adding(.milliseconds(left)), callID: s.callID, sequence: s.sequence)
    }

    static func wallMillis() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    public func setHandler(_ handler: (any IncomingCallHandler)?) { self.handler.withLock { $0 = handler } }

    public func onTrunkChange(_ observer: @escaping @Sendable (TrunkStatus) -> Void) { trunkObservers.withLock { $0.append(observer) } }

    /// Puts `trunks` in force and returns once the loop has them, so the next datagram is screened and routed
    /// by them: a trunk the API has just acknowledged accepts the call that follows at once. (The loop serves
    /// ready sockets before its mailbox, so a change merely posted could lose that race to a waiting INVITE.)
    /// From the loop itself, or with the loop not running, it applies or drops the list without waiting.
    public func updateTrunks(_ trunks: [TrunkConfig]) {
        guard !loop.inLoop, running.load(ordering: .acquiring) else { return onLoop { $0.updateTrunks(trunks) } }
        let applied = DispatchSemaphore(value: 0)
        loop.execute { [self] in
            endpoint.withLock { $0 }?.updateTrunks(trunks)
            applied.signal()
        }
        // From a work-pool job the wake-up would otherwise wait until the job returns.
        EventLoop.flushDeferredWakeUps()
        // A loop stopped meanwhile never runs the job: the bound keeps the caller from waiting forever.
        _ = applied.wait(timeout: .now() + .seconds(5))
    }

    /// The bound SIP-over-TLS port; nil before start or without TLS.
    public var tlsPort: UInt16? { boundTLSPort.withLock { $0 } }

    /// Counters and states for `/metrics`.
    public var snapshot: SIPEndpointSnapshot { endpoint.withLock { $0 }?.snapshot.withLock { $0 } ?? SIPEndpointSnapshot() }

    func onLoop(_ body: @escaping @Sendable (SIPEndpoint) -> Void) {
        loop.execute { [self] in
            if let ep = endpoint.withLock({ $0 }) { body(ep) }
        }
    }

    /// Calls `number` (E.164 digits) through `trunk`, from `callerID`, offering `sdp`; `headers` go into the INVITE as they are.
    public func placeCall(to number: String, from callerID: String, trunk: String, headers: [(String, String)] = [],
                          sdp: SessionDescription) async throws -> OutboundCall {
        let digits = number.hasPrefix("+") ? String(number.dropFirst()) : number
        guard (3...20).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { throw EdgeError.badNumber(number) }
        return try await onRunningLoop { [self] () throws(EdgeError) -> OutboundCall in
            guard let ep = endpoint.withLock({ $0 }) else { throw .stopped }
            guard let config = ep.core.config.trunks.first(where: { $0.name == trunk }) else { throw .unknownTrunk(trunk) }
            let from = SIPAddress(uri: SIPURI(user: callerID, host: IPEndpoint.reference(ep.core.config.host)))
            let id = ep.invite(to: SIPURI(user: digits, host: IPEndpoint.reference(config.host), port: config.port), from: from, sdp: sdp,
                               trunk: config, headers: headers)
            return track(id)
        }
    }

    /// Calls a registered device of `user@domain` (its most recent binding); `headers` go into the INVITE as they are.
    public func callUser(_ aor: String, from callerID: String, headers: [(String, String)] = [], sdp: SessionDescription) async throws -> OutboundCall {
        try await onRunningLoop { [self] () throws(EdgeError) -> OutboundCall in
            guard let ep = endpoint.withLock({ $0 }) else { throw .stopped }
            guard let binding = Self.latestBinding(aor, at: ep) else { throw .notRegistered(aor) }
            let from = SIPAddress(uri: SIPURI(user: callerID, host: IPEndpoint.reference(ep.core.config.host)))
            // The contact's own address when it is numeric (RFC 3261 §8.1.2), else where the REGISTER came from.
            // A device that registered over TLS is called over that connection (RFC 5923 reuse, RFC 5626 flows):
            // it has no certificate of its own to be reached by a new one.
            var peer = binding.source
            if binding.source.transport != .tls, AddressRange.bytes(of: binding.contact.hostPort.host) != nil {
                peer = SIPPeer(host: binding.contact.hostPort.host, port: binding.contact.port ?? 5060,
                               transport: binding.contact.transport.flatMap { SIPTransportKind(name: $0) } ?? binding.source.transport)
            }
            return track(ep.invite(to: binding.contact, from: from, sdp: sdp, peer: peer, headers: headers))
        }
    }

    /// Whether `aor`'s device is reached over TLS (it registered over TLS): a call to it can offer SDES keys.
    public func reachesOverTLS(_ aor: String) async -> Bool {
        let tls = try? await onRunningLoop { [self] () throws(EdgeError) -> Bool in
            guard let ep = endpoint.withLock({ $0 }) else { throw .stopped }
            return Self.latestBinding(aor, at: ep)?.source.transport == .tls
        }
        return tls ?? false
    }

    /// The device registration a call to `aor` uses: the one that expires last.
    private static func latestBinding(_ aor: String, at ep: SIPEndpoint) -> Binding? {
        ep.core.registrar?.lookup(aor, now: .now()).max(by: { $0.expires < $1.expires })
    }

    /// Calls `uri` at its host, directly: `addresses` are the host's (numeric, or a name's answers, best
    /// first) and the first of the edge's IP version is used; the port and transport are the URI's
    /// (`;transport=tcp|tls`, `sips:` is TLS), else 5060 over UDP. `callerID` is the From's user, or its
    /// `user@host`. `headers` go into the INVITE as they are; `credentials` answer the far end's digest challenge.
    public func callURI(_ uri: SIPURI, at addresses: [String], from callerID: String, headers: [(String, String)] = [],
                        credentials: TrunkConfig.Credentials? = nil, sdp: SessionDescription) async throws -> OutboundCall {
        try await onRunningLoop { [self] () throws(EdgeError) -> OutboundCall in
            guard let ep = endpoint.withLock({ $0 }) else { throw .stopped }
            let v6 = ep.core.config.host.contains(":")
            guard let address = addresses.first(where: { $0.contains(":") == v6 }) else {
                throw .unreachable("\(uri.host) has no IPv\(v6 ? 6 : 4) address for this SIP edge")
            }
            let transport: SIPTransportKind = uri.isTLS ? .tls : uri.transport.flatMap { SIPTransportKind(name: $0) } ?? .udp
            let name = NameResolver.numeric(uri.host) == nil ? uri.host : nil
            let peer = SIPPeer(host: address, port: uri.port ?? (transport == .tls ? 5061 : 5060), transport: transport, serverName: name)
            var target = uri
            target.headers = []
            // `user@host` as it is when the host is a name or an address; else all of it is the user, at this edge's address.
            let split = callerID.lastIndex(of: "@").map { (String(callerID[..<$0]), String(callerID[callerID.index(after: $0)...])) }
            let (user, host) = split.flatMap { user, host in
                NameResolver.numeric(host) != nil || NameResolver.isHostName(host.lowercased()) ? (user, host) : nil
            } ?? (callerID, IPEndpoint.reference(ep.core.config.host))
            let from = SIPAddress(uri: SIPURI(user: user, host: host))
            return track(ep.invite(to: target, from: from, sdp: sdp, peer: peer, credentials: credentials, headers: headers))
        }
    }

    /// `body` on the edge's loop; `EdgeError.stopped` when the loop does not run (SIP failed to start, or stopped).
    private func onRunningLoop<T: Sendable>(_ body: @escaping @Sendable () throws(EdgeError) -> T) async throws -> T {
        guard running.load(ordering: .acquiring) else { throw EdgeError.stopped }
        return try await loop.submit(body)
    }

    private func track(_ id: CallID) -> OutboundCall {
        let call = OutboundCall(id: id, edge: self)
        streams.withLock { $0[id] = call.continuation }
        return call
    }

    private func handle(_ event: CallEvent, on ep: SIPEndpoint) {
        switch event {
        case .incomingCall(let id, let from, let to, let offer):
            incoming(id, from: from, to: to, offer: offer, on: ep)
        case .progress(let id, _, _), .connected(let id, _), .updated(let id, _), .digit(let id, _):
            _ = streams.withLock { $0[id] }?.yield(event)
        case .ended(let id, _, _):
            if let c = streams.withLock({ $0.removeValue(forKey: id) }) {
                c.yield(event)
                c.finish()
            }
        }
    }

    private func incoming(_ id: CallID, from: SIPAddress, to: SIPAddress, offer: SessionDescription?, on ep: SIPEndpoint) {
        guard let request = ep.core.request(for: id), let peer = ep.core.peer(for: id) else { return }
        let trunk = ep.core.trunk(forSource: peer.host)
        let user = to.uri.user ?? ""
        let digits = user.hasPrefix("+") ? String(user.dropFirst()) : user
        let route = directory.route(number: digits)
        if trunk != nil, route == nil { return ep.reject(id, status: 404) }
        // The handler decides for numbers with no voice application (480 unless it answers them itself).
        guard let handler = handler.withLock({ $0 }) else { return ep.reject(id, status: 480) }
        let call = IncomingCall(id: id, request: request, from: from, to: to, number: digits, route: route, trunk: trunk?.name,
                                offer: offer, edge: self)
        streams.withLock { $0[id] = call.continuation }
        handler.incomingCall(call)
    }
}
