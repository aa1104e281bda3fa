import CShims
import Foundation
import Synchronization
import Wire

/// Limits and timeouts of the HTTP server.
public struct HTTPServerConfiguration: Sendable {
    public var parserLimits = HTTPParserLimits()
    public var headerTimeout: Duration = .seconds(10)
    public var idleTimeout: Duration = .seconds(60)
    public var webSocketMaxMessage = 1 << 20
    /// Bytes queued toward a WebSocket peer before it is disconnected as a slow consumer.
    public var webSocketMaxQueued = 4 << 20
    public var serverName = "switchboard"
    /// Connections open at once (HTTP and WebSocket together); never more than the descriptor limit less
    /// `descriptorReserve` (also the default, 0), so accepting can never starve the rest of the process of
    /// descriptors: libdispatch, under Swift concurrency, aborts the process (SIGILL) when it cannot open
    /// `/proc/self/task/…` to watch its thread pool.
    public var maxConnections = 0
    /// Connections open at once from one IP address; 0: no limit of its own.
    public var maxConnectionsPerAddress = 0
    /// Descriptors kept out of the connection budget for the store, media sockets, outgoing webhooks and
    /// the runtime itself.
    public var descriptorReserve = 64
    public init() {}
}

/// The HTTP/1.1 + WebSocket server: one listener per address, connections spread over the loops.
public final class HTTPServer: Sendable {
    public let group: EventLoopGroup
    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let metrics: Metrics
    /// Where handlers that do not run on the loops run (blocking work: the store, key generation).
    let work: WorkPool
    private let ownsWork: Bool
    private let listeners = Mutex<[(TCPListener, [Acceptor])]>([])
    /// Live connections per loop index; each set touched only on its loop.
    let registry: ConnectionRegistry
    let draining = Atomic<Bool>(false)
    /// Connections counted against the limits, from accept to close.
    let admission: Mutex<Admission>
    /// The total connection limit in force (configured, or derived from the descriptor limit at start).
    public let connectionLimit: Int

    public init(group: EventLoopGroup, configuration: HTTPServerConfiguration = .init(), responder: any HTTPResponder,
                metrics: Metrics = .shared, work: WorkPool? = nil) {
        self.group = group
        self.configuration = configuration
        self.responder = responder
        self.metrics = metrics
        self.work = work ?? WorkPool(name: "http-work")
        ownsWork = work == nil
        registry = ConnectionRegistry(loops: group.loops.count)
        let budget = max(16, DescriptorLimit.current - configuration.descriptorReserve)
        connectionLimit = configuration.maxConnections > 0 ? min(configuration.maxConnections, budget) : budget
        admission = Mutex(Admission())
        sb_ignore_sigpipe()
        metrics.gauge("switchboard_connection_limit", help: "Connections the server accepts at once.") { [connectionLimit] in
            Double(connectionLimit)
        }
    }

    /// Binds `address` (port 0 picks one) and accepts on every loop; `bound` hears the address bound before the
    /// first connection is accepted (so what depends on it is ready for the first request). Returns the bound address.
    @discardableResult
    public func listen(_ address: SocketAddress, tls: TLSContext? = nil, bound: (SocketAddress) -> Void = { _ in }) throws -> SocketAddress {
        let listener = try TCPListener(address: address)
        bound(listener.address)
        var acceptors: [Acceptor] = []
        let lock = Mutex<[Acceptor]>([])
        let done = DispatchSemaphore(value: 0)
        for loop in group.loops {
            loop.execute { [self] in
                let acceptor = Acceptor(listener: listener, loop: loop, metrics: metrics, onShed: { fd in
                    Self.refuse(fd: fd, plaintext: tls == nil, detail: "The server is out of file descriptors; retry shortly.")
                }) { [self] fd, peer in
                    self.accept(fd: fd, peer: peer, loop: loop, tls: tls)
                }
                lock.withLock { $0.append(acceptor) }
                done.signal()
            }
        }
        // Called from a work-pool job, the loops would otherwise be woken only once this job returns.
        EventLoop.flushDeferredWakeUps()
        for _ in group.loops { done.wait() }
        acceptors = lock.withLock { $0 }
        listeners.withLock { $0.append((listener, acceptors)) }
        return listener.address
    }

    /// Hands each accepted connection to the next loop in turn. Whichever loop wins the EPOLLEXCLUSIVE wake-up
    /// accepts a whole burst, so without this a benchmark's 64 connections all land on one thread.
    private func accept(fd: Int32, peer: SocketAddress?, loop: EventLoop, tls: TLSContext?) {
        let verdict = admission.withLock { $0.admit(host: peer?.host, limit: connectionLimit,
                                                    perAddress: configuration.maxConnectionsPerAddress) }
        if let refusal = verdict {
            metrics.increment("switchboard_connections_refused_total", help: "Connections refused at accept: over the total or per-address limit.")
            Self.refuse(fd: fd, plaintext: tls == nil, detail: refusal)
            return
        }
        let target = group.next()
        if target === loop {
            adopt(fd: fd, peer: peer, loop: loop, tls: tls)
        } else {
            target.execute { [self] in self.adopt(fd: fd, peer: peer, loop: target, tls: tls) }
        }
    }

    private func adopt(fd: Int32, peer: SocketAddress?, loop: EventLoop, tls: TLSContext?) {
        if draining.load(ordering: .relaxed) {
            release(peer)
            close(fd)
            return
        }
        let stream: ByteStream
        if let tls {
            guard let s = try? TLSStream(fd: fd, context: tls) else { release(peer); close(fd); return }
            stream = s
        } else {
            stream = PlainStream(fd: fd)
        }
        let channel = Channel(loop: loop, fd: fd, stream: stream, remote: peer)
        let connection = HTTPServerConnection(server: self, channel: channel, isSecure: tls != nil)
        registry.add(connection, loop: loop.index)
        metrics.openConnections.wrappingAdd(1, ordering: .relaxed)
        channel.activate(handler: connection)
    }

    func connectionClosed(_ c: HTTPServerConnection, loop: Int) {
        registry.remove(c, loop: loop)
        release(c.channel.remote)
        metrics.openConnections.wrappingSubtract(1, ordering: .relaxed)
    }

    private func release(_ peer: SocketAddress?) {
        admission.withLock { $0.release(host: peer?.host) }
    }

    /// Answers a connection over the limits with a 503 (plain HTTP; a TLS client just sees the close) and
    /// closes it without reading: the refusal costs one write and holds no descriptor.
    static func refuse(fd: Int32, plaintext: Bool, detail: String) {
        if plaintext {
            let body = #"{"type":"https://developer.vonage.com/api-errors#service-unavailable","title":"Service Unavailable","detail":"\#(detail)"}"#
            let response = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/problem+json\r\nRetry-After: 1\r\n"
                + "Connection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
            _ = response.utf8CString.withUnsafeBufferPointer { Glibc.send(fd, $0.baseAddress, $0.count - 1, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        }
        Glibc.close(fd)
    }

    /// Stops accepting, lets in-flight requests finish until `deadline`, closes WebSockets with 1001,
    /// then closes whatever is left.
    public func shutdown(gracePeriod: Duration = .seconds(10)) async {
        draining.store(true, ordering: .relaxed)
        let all = listeners.withLock { l in
            let all = l
            l.removeAll()
            return all
        }
        for (listener, acceptors) in all {
            for a in acceptors { await a.stopOnLoop() }
            listener.close()
        }
        for loop in group.loops {
            let i = loop.index
            try? await loop.submit { [registry] in registry.each(loop: i) { $0.beginDrain() } }
        }
        let deadline = Instant.now().adding(gracePeriod)
        while registry.total() > 0 && Instant.now() < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        for loop in group.loops {
            let i = loop.index
            try? await loop.submit { [registry] in registry.each(loop: i) { $0.channel.close() } }
        }
        if ownsWork { work.shutdown() }
    }

    public var connectionCount: Int { registry.total() }
}

/// Connections counted against the total and per-address limits; guarded by `HTTPServer.admission`.
struct Admission {
    var total = 0
    var perHost: [String: Int] = [:]

    /// Counts the connection in, or says why it is refused.
    mutating func admit(host: String?, limit: Int, perAddress: Int) -> String? {
        if total >= limit { return "The server is at its connection limit; retry shortly." }
        if perAddress > 0, let host, perHost[host, default: 0] >= perAddress {
            return "Too many connections from this address."
        }
        total += 1
        if let host { perHost[host, default: 0] += 1 }
        return nil
    }

    mutating func release(host: String?) {
        total -= 1
        if let host, let n = perHost[host] { perHost[host] = n > 1 ? n - 1 : nil }
    }
}

/// Per-loop sets of live connections; each set is touched only on its own loop, the count is atomic.
final class ConnectionRegistry: @unchecked Sendable {
    // Invariant: sets[i] is read and written only on loop i's thread.
    private var sets: [[ObjectIdentifier: HTTPServerConnection]]
    private let count = Atomic<Int>(0)

    init(loops: Int) { sets = Array(repeating: [:], count: loops) }

    func add(_ c: HTTPServerConnection, loop: Int) {
        sets[loop][ObjectIdentifier(c)] = c
        count.wrappingAdd(1, ordering: .relaxed)
    }

    func remove(_ c: HTTPServerConnection, loop: Int) {
        if sets[loop].removeValue(forKey: ObjectIdentifier(c)) != nil { count.wrappingSubtract(1, ordering: .relaxed) }
    }

    func each(loop: Int, _ body: (HTTPServerConnection) -> Void) {
        for c in Array(sets[loop].values) { body(c) }
    }

    func total() -> Int { count.load(ordering: .relaxed) }
}
