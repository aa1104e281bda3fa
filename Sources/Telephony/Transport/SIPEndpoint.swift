import CShims
import Glibc
import Crypto
import Runtime
import Synchronization
import Wire

/// The SIP user agent on an event loop: a UDP socket and a TCP listener on the same port feeding
/// `UserAgentCore`, its outputs sent, its deadlines scheduled as loop timers, its call events
/// handed to `onEvent` on the loop.
///
/// TCP connections are reused per peer (the peer is the connection's address, so responses and
/// in-dialog requests go back on the connection a request came in on) and bounded: `maxConnections`
/// at once, `maxConnectionsPerAddress` from one IP, a 1 MiB write queue each, idle ones closed.
///
/// Confined to its loop: every method must be called there (`loop.execute`/`submit`), which is
/// what makes the unchecked Sendable conformance sound.
public final class SIPEndpoint: Selectable, @unchecked Sendable {
    public unowned let loop: EventLoop
    public let core: UserAgentCore
    public var port: UInt16 { socket.port }
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
    private var connections: [SIPPeer: SIPTCPConnection] = [:]
    private let onEvent: (SIPEndpoint, CallEvent) -> Void
    private var timer: TimerHandle?
    private var timerDeadline: Instant?
    private var sweepTimer: TimerHandle?
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)
    private var closed = false

    /// Opens the sockets and registers them; call on `loop`. With `tcp`, a TCP listener shares the UDP port.
    public init(loop: EventLoop, config: UserAgentConfig, tcp: Bool = true, random: any RandomSource = SystemRandom(),
                onEvent: @escaping (SIPEndpoint, CallEvent) -> Void) throws(SIPTransportError) {
        self.loop = loop
        var udp = try SIPUDPSocket(host: config.host, port: config.port)
        // Any port: the one the kernel gave UDP may be some TCP connection's local port already.
        for _ in 0..<16 where tcp && config.port == 0 && !SIPTCPListener.canBind(host: config.host, port: udp.port) {
            udp = try SIPUDPSocket(host: config.host, port: 0)
        }
        self.socket = udp
        var effective = config
        effective.port = socket.port
        self.core = UserAgentCore(config: effective, random: random)
        self.onEvent = onEvent
        loop.register(fd: socket.fd, events: SB_EPOLLIN, handler: self)
        if tcp {
            do {
                let listener = try SIPTCPListener(host: config.host, port: socket.port) { [unowned self] fd, peer in self.accepted(fd, peer) }
                self.listener = listener
                loop.register(fd: listener.fd, events: SB_EPOLLIN, handler: listener)
            } catch {
                loop.unregister(fd: socket.fd)
                throw error
            }
        }
        scheduleSweep()
        reschedule()
    }

    deinit { buffer.deallocate() }

    public var tcpEnabled: Bool { listener != nil }
    public var connectionCount: Int { connections.count }

    /// Stops listening and closes every connection; pending transactions are abandoned.
    public func close() {
        guard !closed else { return }
        closed = true
        loop.cancel(timer)
        loop.cancel(sweepTimer)
        loop.unregister(fd: socket.fd)
        if let listener { loop.unregister(fd: listener.fd) }
        listener = nil
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
    /// 180 Ringing, or 183 Session Progress with early-media SDP.
    public func progress(_ id: CallID, status: Int = 183, sdp: SessionDescription? = nil) {
        perform(core.progress(id, status: status, sdp: sdp, now: .now()))
    }

    @discardableResult
    public func invite(to: SIPURI, from: SIPAddress, sdp: SessionDescription, trunk: TrunkConfig) -> CallID {
        let (id, outputs) = core.invite(to: to, from: from, sdp: sdp, trunk: trunk, now: .now())
        perform(outputs)
        return id
    }

    @discardableResult
    public func invite(to: SIPURI, from: SIPAddress, sdp: SessionDescription, peer: SIPPeer) -> CallID {
        let (id, outputs) = core.invite(to: to, from: from, sdp: sdp, peer: peer, now: .now())
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
        connections[peer] = makeConnection(fd: fd, peer: peer, connecting: false)
    }

    private func makeConnection(fd: Int32, peer: SIPPeer, connecting: Bool) -> SIPTCPConnection {
        SIPTCPConnection(fd: fd, peer: peer, loop: loop, connecting: connecting, limits: .default, buffer: buffer,
                         onMessage: { [unowned self] connection, message in
                             self.perform(self.core.receive(message.serialize(), from: connection.peer, now: .now()))
                         },
                         onClose: { [unowned self] connection, failed in
                             if self.connections[connection.peer] === connection { self.connections[connection.peer] = nil }
                             if failed, !self.closed { self.perform(self.core.transportFailed(to: connection.peer, now: .now())) }
                         })
    }

    private func sendStream(_ bytes: [UInt8], to peer: SIPPeer) {
        if let connection = connections[peer] {
            connection.send(bytes)
            return
        }
        guard !closed, connections.count < maxConnections, let fd = SIPTCPConnection.connect(to: peer) else {
            loop.execute { [weak self] in
                guard let self, !self.closed else { return }
                self.perform(self.core.transportFailed(to: peer, now: .now()))
            }
            return
        }
        let connection = makeConnection(fd: fd, peer: peer, connecting: true)
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
                case .tcp: sendStream(message.serialize(), to: peer)
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
        let open = connections.count
        snapshot.withLock {
            $0 = SIPEndpointSnapshot(statistics: statistics, trunks: trunks, transactions: transactions, calls: calls,
                                     bindings: bindings, connections: open)
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
