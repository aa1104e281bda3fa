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
/// Confined to its loop; `stopOnLoop` is the one entry from elsewhere and hops to the loop first.
final class Acceptor: Selectable, @unchecked Sendable {
    let listener: TCPListener
    unowned let loop: EventLoop
    let onAccept: (Int32, SocketAddress?) -> Void
    var active = true

    init(listener: TCPListener, loop: EventLoop, onAccept: @escaping (Int32, SocketAddress?) -> Void) {
        self.listener = listener
        self.loop = loop
        self.onAccept = onAccept
        loop.register(fd: listener.fd, events: SB_EPOLLIN | SB_EPOLLEXCLUSIVE, handler: self)
    }

    func handle(events: UInt32) {
        guard active else { return }
        for _ in 0..<64 {
            var storage = sockaddr_storage()
            var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let cfd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sb_accept4(listener.fd, $0, &len, SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC)
                }
            }
            if cfd < 0 { return }
            var one: Int32 = 1
            setsockopt(cfd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let peer = withUnsafePointer(to: &storage) { SocketAddress.from($0) }
            onAccept(cfd, peer)
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
