import CShims
import Glibc

/// A listening TCP socket shared by every loop of a group (EPOLLEXCLUSIVE wakes one loop per connection).
public final class TCPListener: @unchecked Sendable {
    // Invariant: `fd` is immutable after init; per-loop acceptors touch it only from their own loop.
    public let fd: Int32
    public let address: SocketAddress

    public init(address: SocketAddress, backlog: Int32 = 1024) throws {
        let domain = address.family == .v6 ? AF_INET6 : AF_INET
        let fd = socket(domain, Int32(SOCK_STREAM.rawValue) | SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC, 0)
        guard fd >= 0 else { throw SocketError.system("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        do {
            try address.withSockAddr { sa, len in
                guard bind(fd, sa, len) == 0 else { throw SocketError.system("bind \(address)", errno) }
            }
            guard listen(fd, backlog) == 0 else { throw SocketError.system("listen", errno) }
        } catch {
            Glibc.close(fd)
            throw error
        }
        self.fd = fd
        self.address = SocketAddress.local(of: fd) ?? address
    }

    /// Stops accepting: new connections are refused.
    public func close() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)); Glibc.close(fd) }
}

/// Accepts connections on one loop and hands each to `onAccept` on that loop.
///
/// Out of descriptors (`EMFILE`/`ENFILE`) the listener would stay readable and the loop would spin on
/// failing `accept` calls. The acceptor keeps one spare descriptor open instead: it closes the spare,
/// accepts the waiting connection, hands it to `onShed` to be refused, and reopens the spare. When even
/// that fails it stops watching the listener for 100 ms.
///
/// Confined to its loop; `stopOnLoop` is the one entry from elsewhere and hops to the loop first.
final class Acceptor: Selectable, @unchecked Sendable {
    /// `accept4(2)` with the flags the acceptor needs; replaceable so tests can make it fail.
    typealias AcceptFunction = @Sendable (Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?) -> Int32
    static let systemAccept: AcceptFunction = { sb_accept4($0, $1, $2, SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC) }

    let listener: TCPListener
    unowned let loop: EventLoop
    let metrics: Metrics
    let accept: AcceptFunction
    let onAccept: (Int32, SocketAddress?) -> Void
    let onShed: (Int32) -> Void
    var active = true
    var paused = false
    private var spare: Int32

    static let pauseAfterFailure: Duration = .milliseconds(100)

    init(listener: TCPListener, loop: EventLoop, metrics: Metrics, accept: @escaping AcceptFunction = Acceptor.systemAccept,
         onShed: @escaping (Int32) -> Void, onAccept: @escaping (Int32, SocketAddress?) -> Void) {
        self.listener = listener
        self.loop = loop
        self.metrics = metrics
        self.accept = accept
        self.onAccept = onAccept
        self.onShed = onShed
        spare = Self.openSpare()
        loop.register(fd: listener.fd, events: SB_EPOLLIN | SB_EPOLLEXCLUSIVE, handler: self)
    }

    deinit { if spare >= 0 { Glibc.close(spare) } }

    private static func openSpare() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }

    func handle(events: UInt32) {
        guard active, !paused else { return }
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let cfd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(listener.fd, $0, &len) }
            }
            if cfd < 0 {
                switch errno {
                case EAGAIN, EWOULDBLOCK: return
                case EINTR, ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE:
                    metrics.increment("switchboard_accept_descriptor_exhausted_total",
                                      help: "accept() found the process or system out of descriptors (EMFILE/ENFILE).")
                    if !shedOne() { pause(); return }
                default:
                    metrics.increment("switchboard_accept_errors_total", help: "accept() failures other than running out of descriptors.")
                    pause()
                    return
                }
                continue
            }
            var one: Int32 = 1
            setsockopt(cfd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let peer = withUnsafePointer(to: &storage) { SocketAddress.from($0) }
            onAccept(cfd, peer)
        }
    }

    /// Frees the spare descriptor for one waiting connection and refuses that connection; false when
    /// there was no spare or nothing could be accepted with it.
    private func shedOne() -> Bool {
        guard spare >= 0 else { spare = Self.openSpare(); return false }
        Glibc.close(spare)
        let cfd = accept(listener.fd, nil, nil)
        if cfd >= 0 { onShed(cfd) }
        spare = Self.openSpare()
        return cfd >= 0 && spare >= 0
    }

    /// Stops watching the listener for a while, so a failure that persists costs no CPU.
    private func pause() {
        guard !paused else { return }
        paused = true
        loop.unregister(fd: listener.fd)
        loop.schedule(after: Self.pauseAfterFailure) { [self] in
            paused = false
            if active { loop.register(fd: listener.fd, events: SB_EPOLLIN | SB_EPOLLEXCLUSIVE, handler: self) }
        }
    }

    func stopOnLoop() async {
        _ = try? await loop.submit { self.stop() }
    }

    func stop() {
        active = false
        loop.unregister(fd: listener.fd)
    }
}
