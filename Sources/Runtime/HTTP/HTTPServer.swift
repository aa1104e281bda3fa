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
    /// Run request handlers as tasks preferring the connection's event loop (no thread hop per request).
    /// A handler that blocks its thread for long (heavy CPU, slow synchronous I/O) then stalls every
    /// connection on that loop: such handlers should move the work off the loop, or set this to false to run
    /// all handlers on the global concurrent executor.
    public var handlersRunOnEventLoop = true
    public init() {}
}

/// The HTTP/1.1 + WebSocket server: one listener per address, connections spread over the loops.
public final class HTTPServer: Sendable {
    public let group: EventLoopGroup
    let configuration: HTTPServerConfiguration
    let responder: any HTTPResponder
    let metrics: Metrics
    private let listeners = Mutex<[(TCPListener, [Acceptor])]>([])
    /// Live connections per loop index; each set touched only on its loop.
    let registry: ConnectionRegistry
    let draining = Atomic<Bool>(false)

    public init(group: EventLoopGroup, configuration: HTTPServerConfiguration = .init(), responder: any HTTPResponder, metrics: Metrics = .shared) {
        self.group = group
        self.configuration = configuration
        self.responder = responder
        self.metrics = metrics
        registry = ConnectionRegistry(loops: group.loops.count)
        sb_ignore_sigpipe()
    }

    /// Starts accepting on `address` (port 0 picks one); returns the bound address.
    @discardableResult
    public func listen(_ address: SocketAddress, tls: TLSContext? = nil) throws -> SocketAddress {
        let listener = try TCPListener(address: address)
        var acceptors: [Acceptor] = []
        let lock = Mutex<[Acceptor]>([])
        let done = DispatchSemaphore(value: 0)
        for loop in group.loops {
            loop.execute { [self] in
                let acceptor = Acceptor(listener: listener, loop: loop) { [self] fd, peer in
                    self.accept(fd: fd, peer: peer, loop: loop, tls: tls)
                }
                lock.withLock { $0.append(acceptor) }
                done.signal()
            }
        }
        for _ in group.loops { done.wait() }
        acceptors = lock.withLock { $0 }
        listeners.withLock { $0.append((listener, acceptors)) }
        return listener.address
    }

    /// Hands each accepted connection to the next loop in turn. Whichever loop wins the EPOLLEXCLUSIVE wake-up
    /// accepts a whole burst, so without this a benchmark's 64 connections all land on one thread.
    private func accept(fd: Int32, peer: SocketAddress?, loop: EventLoop, tls: TLSContext?) {
        let target = group.next()
        if target === loop {
            adopt(fd: fd, peer: peer, loop: loop, tls: tls)
        } else {
            target.execute { [self] in self.adopt(fd: fd, peer: peer, loop: target, tls: tls) }
        }
    }

    private func adopt(fd: Int32, peer: SocketAddress?, loop: EventLoop, tls: TLSContext?) {
        if draining.load(ordering: .relaxed) {
            close(fd)
            return
        }
        let stream: ByteStream
        if let tls {
            guard let s = try? TLSStream(fd: fd, context: tls) else { close(fd); return }
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
        metrics.openConnections.wrappingSubtract(1, ordering: .relaxed)
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
    }

    public var connectionCount: Int { registry.total() }
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
