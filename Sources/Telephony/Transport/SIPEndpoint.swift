import CShims
import Glibc
import Crypto
import Runtime
import Synchronization
import Wire

/// The SIP user agent on an event loop: a UDP socket and a TCP listener on the same port, and with
/// `SIPTLSConfig` a TLS listener on its own port, feeding `UserAgentCore`, its outputs sent, its deadlines
/// scheduled as loop timers, its call events handed to `onEvent` on the loop.
///
/// TCP and TLS connections are reused per peer (the peer is the connection's address and transport, so
/// responses and in-dialog requests go back on the connection a request came in on, and a device that
/// registered over TLS is called over its connection, as RFC 5923 reuses them) and bounded together:
/// `maxConnections` at once, `maxConnectionsPerAddress` from one IP, a 1 MiB write queue each, idle ones
/// closed. A TLS connection whose handshake fails, or has not finished after the handshake timeout, is
/// closed and counted.
///
/// Confined to its loop: every method must be called there (`loop.execute`/`submit`), which is
/// what makes the unchecked Sendable conformance sound.
public final class SIPEndpoint: Selectable, @unchecked Sendable {
    public unowned let loop: EventLoop
    public let core: UserAgentCore
    public var port: UInt16 { socket.port }
    /// The bound SIP-over-TLS port, nil without TLS.
    public var tlsPort: UInt16? { tlsListener?.port }
    public var maxConnections = 1024
    public var maxConnectionsPerAddress = 32
    /// Connections with no traffic for this long are closed.
    public var idleTimeout: Duration = .seconds(600)
    /// Trunk health and registration changes, on the loop.
    public var onTrunk: ((SIPEndpoint, TrunkStatus) -> Void)?
    /// An address of record's bindings changed (a REGISTER was accepted), before the 200 is sent.
    public var onBindings: ((String, [Binding]) -> Void)?
    /// Counters, trunk states and sizes for `/metrics`, readable from any thread.
    public let snapshot = Mutex(SIPEndpointSnapshot())
    private let socket: SIPUDPSocket
    private var listener: SIPTCPListener?
    private var tlsListener: SIPTCPListener?
    private let tls: SIPTLSConfig?
    private var tlsHandshakeFailures = 0
    /// TLS connections made and not yet closed (kept as a count: `publish` runs after every message).
    private var tlsOpen = 0
    private var tlsHandshakeTimeouts = 0
    private var connections: [SIPPeer: SIPTCPConnection] = [:]
    private let onEvent: (SIPEndpoint, CallEvent) -> Void
    private var timer: TimerHandle?
    private var timerDeadline: Instant?
    private var sweepTimer: TimerHandle?
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
    private var closed = false

    /// Opens the sockets and registers them; call on `loop`. With `tcp`, a TCP listener shares the UDP port;
    /// with `tls`, a TLS listener takes its port.
    public init(loop: EventLoop, config: UserAgentConfig, tcp: Bool = true, tls: SIPTLSConfig? = nil,
                random: any RandomSource = SystemRandom(),
                onEvent: @escaping (SIPEndpoint, CallEvent) -> Void) throws(SIPTransportError) {
        self.loop = loop
        self.tls = tls
        var udp = try SIPUDPSocket(host: config.host, port: config.port)
        // Any port: the one the kernel gave UDP may be some TCP connection's local port already.
        for _ in 0..<16 where tcp && config.port == 0 && !SIPTCPListener.canBind(host: config.host, port: udp.port) {
            udp = try SIPUDPSocket(host: config.host, port: 0)
        }
        self.socket = udp
        // Bound before anything is registered, so a port that cannot be had leaves nothing behind. TLS binds
        // after TCP: with port 0 the kernel could otherwise hand TLS the TCP twin of the UDP port.
        let stream = tcp ? try SIPTCPListener(host: config.host, port: udp.port) { _, _ in } : nil
        var secure: SIPTCPListener?
        if let tls {
            do throws(SIPTransportError) { secure = try SIPTCPListener(host: config.host, port: tls.port, transport: .tls) { _, _ in } } catch {
                if tls.required { throw error }
            }
        }
        var effective = config
        effective.port = socket.port
        effective.tlsPort = secure?.port
        self.core = UserAgentCore(config: effective, random: random)
        self.onEvent = onEvent
        loop.register(fd: socket.fd, events: SB_EPOLLIN, handler: self)
        for listener in [stream, secure].compactMap({ $0 }) {
            listener.onAccept = { [unowned self] fd, peer in self.accepted(fd, peer) }
            loop.register(fd: listener.fd, events: SB_EPOLLIN, handler: listener)
        }
        self.listener = stream
        self.tlsListener = secure
        scheduleSweep()
        reschedule()
    }

    deinit { buffer.deallocate() }

    public var tcpEnabled: Bool { listener != nil }
    public var connectionCount: Int { connections.count }
    /// Open TLS connections, handshaking or established.
    public var tlsConnectionCount: Int { tlsOpen }

    /// Stops listening and closes every connection; pending transactions are abandoned.
    public func close() {
        guard !closed else { return }
        closed = true
        loop.cancel(timer)
        loop.cancel(sweepTimer)
        loop.unregister(fd: socket.fd)
        if let listener { loop.unregister(fd: listener.fd) }
        if let tlsListener { loop.unregister(fd: tlsListener.fd) }
        listener = nil
        tlsListener = nil
        for connection in Array(connections.values) { connection.close(failed: false) }
    }

    public func handle(events: UInt32) {
        for _ in 0..<64 {
            guard let (n, peer) = socket.receive(into: buffer) else { break }
            perform(core.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<n]), from: peer, now: .now()))
        }
    }

    public func answer(_ id: CallID, sdp: SessionDescription) { perform(core.answer(id, sdp: sdp, now: .now())) }
    public func reject(_ id: CallID, status: Int) { perform(core.reject(id, status: status, now: .now())) }
    public func hangup(_ id: CallID) { perform(core.hangup(id, now: .now())) }
    public func sendKey(_ id: CallID, _ key: Character) { perform(core.sendKey(id, key, now: .now())) }
    /// 180 Ringing, or 183 Session Progress with early-media SDP.
    public func progress(_ id: CallID, status: Int = 183, sdp: SessionDescription? = nil) {
        perform(core.progress(id, status: status, sdp: sdp, now: .now()))
    }

    @discardableResult
    public func invite(to: SIPURI, from: SIPAddress, sdp: SessionDescription, trunk: TrunkConfig, headers: [(String, String)] = []) -> CallID {
        let (id, outputs) = core.invite(to: to, from: from, sdp: sdp, trunk: trunk, headers: headers, now: .now())
        perform(outputs)
        return id
    }

    @discardableResult
    public func invite(to: SIPURI, from: SIPAddress, sdp: SessionDescription, peer: SIPPeer,
                       credentials: TrunkConfig.Credentials? = nil, headers: [(String, String)] = []) -> CallID {
        let (id, outputs) = core.invite(to: to, from: from, sdp: sdp, peer: peer, credentials: credentials, headers: headers, now: .now())
        perform(outputs)
        return id
    }

    public func updateTrunks(_ trunks: [TrunkConfig]) { perform(core.updateTrunks(trunks, now: .now())) }

    // MARK: TCP

    private func accepted(_ fd: Int32, _ peer: SIPPeer) {
        let fromAddress = connections.keys.lazy.filter { $0.host == peer.host }.count
        guard !closed, connections.count < maxConnections, fromAddress < maxConnectionsPerAddress else {
            Glibc.close(fd)
            return
        }
        guard let connection = makeConnection(fd: fd, peer: peer, connecting: false) else { return }
        connections[peer] = connection
        publish()
    }

    /// A connection over `fd`: TLS (server side when accepted, client side when `connecting`) for a TLS peer.
    /// nil (the descriptor closed) when TLS is off or OpenSSL cannot make the session.
    private func makeConnection(fd: Int32, peer: SIPPeer, connecting: Bool) -> SIPTCPConnection? {
        var stream: TLSStream?
        if peer.transport == .tls {
            guard let tls, let s = try? TLSStream(fd: fd, context: connecting ? tls.client : tls.server, serverName: connecting ? peer.serverName ?? peer.host : nil) else {
                Glibc.close(fd)
                return nil
            }
            stream = s
        }
        let connection = SIPTCPConnection(fd: fd, peer: peer, loop: loop, connecting: connecting, tls: stream, limits: .default, buffer: buffer,
                         onMessage: { [unowned self] connection, message in
                             self.perform(self.core.receive(message.serialize(), from: connection.peer, now: .now()))
                         },
                         onClose: { [unowned self] connection, failed in
                             if self.connections[connection.peer] === connection { self.connections[connection.peer] = nil }
                             if connection.isTLS { self.tlsOpen -= 1 }
                             if connection.isTLS, !connection.isHandshakeComplete, !connection.timedOut, !self.closed {
                                 self.tlsHandshakeFailures += 1
                             }
                             if failed, !self.closed { self.perform(self.core.transportFailed(to: connection.peer, now: .now())) }
                             else { self.publish() }
                         })
        if let tls, stream != nil {
            tlsOpen += 1
            connection.handshakeTimer = loop.schedule(after: tls.handshakeTimeout) { [weak self, weak connection] in
                guard let self, let connection, !connection.isClosed else { return }
                connection.handshakeTimer = nil
                guard !connection.isHandshakeComplete else { return }
                self.tlsHandshakeTimeouts += 1
                connection.timedOut = true
                connection.close(failed: true)
            }
        }
        return connection
    }

    private func sendStream(_ bytes: [UInt8], to peer: SIPPeer) {
        if let connection = connections[peer] {
            connection.send(bytes)
            return
        }
        guard !closed, connections.count < maxConnections, let fd = SIPTCPConnection.connect(to: peer),
              let connection = makeConnection(fd: fd, peer: peer, connecting: true) else {
            loop.execute { [weak self] in
                guard let self, !self.closed else { return }
                self.perform(self.core.transportFailed(to: peer, now: .now()))
            }
            return
        }
        connections[peer] = connection
        connection.send(bytes)
    }

    private func scheduleSweep() {
        sweepTimer = loop.schedule(after: .seconds(30)) { [weak self] in
            guard let self, !self.closed else { return }
            let cutoff = Instant.now().nanoseconds &- UInt64(self.idleTimeout.components.seconds) * 1_000_000_000
            for connection in Array(self.connections.values) where connection.lastActivity.nanoseconds < cutoff {
                connection.close(failed: false)
            }
            self.scheduleSweep()
        }
    }

    // MARK: Outputs and timers

    private func perform(_ outputs: [UserAgentOutput]) {
        for output in outputs {
            switch output {
            case .send(let message, let peer):
                switch peer.transport {
                case .udp: socket.send(message.serialize(), to: peer)
                case .tcp, .tls: sendStream(message.serialize(), to: peer)
                }
            case .event(let event): onEvent(self, event)
            case .trunk(let status): onTrunk?(self, status)
            case .bindings(let aor, let list): onBindings?(aor, list)
            }
        }
        publish()
        reschedule()
    }

    private func publish() {
        let statistics = core.statistics
        let trunks = core.trunkStatuses
        let transactions = core.pendingTransactions
        let calls = core.activeCalls
        let bindings = core.registrar?.bindingCount ?? 0
        let secure = tlsConnectionCount
        let open = max(0, connections.count - secure)
        let (failures, timeouts) = (tlsHandshakeFailures, tlsHandshakeTimeouts)
        snapshot.withLock {
            $0 = SIPEndpointSnapshot(statistics: statistics, trunks: trunks, transactions: transactions, calls: calls,
                                     bindings: bindings, connections: open, tlsConnections: secure, tlsHandshakeFailures: failures,
                                     tlsHandshakeTimeouts: timeouts)
        }
    }

    private func reschedule() {
        guard !closed, let next = core.nextDeadline else {
            loop.cancel(timer)
            timer = nil
            timerDeadline = nil
            return
        }
        if let timerDeadline, timerDeadline == next { return }
        loop.cancel(timer)
        timerDeadline = next
        timer = loop.schedule(at: next) { [weak self] in
            guard let self else { return }
            self.timer = nil
            self.timerDeadline = nil
            self.perform(self.core.tick(now: .now()))
        }
    }
}
