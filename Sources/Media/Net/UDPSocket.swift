import CShims
import Glibc

/// Why a media socket could not be opened.
public struct SocketError: Error, Sendable, CustomStringConvertible {
    public var operation: String
    public var code: Int32
    public var description: String { "\(operation) failed: \(String(cString: strerror(code)))" }

    package init(operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }
}

/// One non-blocking UDP socket bound to a media port, owned by a worker thread.
///
/// A host of `::` opens a dual-stack socket (IPv4 peers appear as mapped addresses); an
/// IPv4 literal opens a plain IPv4 socket. Package-wide: the load generator's peers and the UDP
/// send floor (MediaLoad) open theirs the same way.
package final class UDPSocket {
    package let fd: Int32
    package let isIPv6: Bool
    package let localPort: UInt16
    /// The address `bind` gave the socket (its port filled in when 0 was asked for).
    private let bound: sockaddr_storage

    package init(host: String, port: UInt16) throws(SocketError) {
        guard let address = PeerAddress(host: host, port: port) else {
            throw SocketError(operation: "parse \(host)", code: EINVAL)
        }
        let v6 = address.isIPv6 || host.contains(":")
        var storage = sockaddr_storage()
        withUnsafeMutablePointer(to: &storage) { address.write(to: $0, ipv6Socket: v6) }
        // No SO_REUSEADDR or SO_REUSEPORT: UDP has no TIME_WAIT to skip, and on Linux two sockets that
        // both set one may share a port, even one picked for port 0, and then split each other's datagrams.
        let fd = try Self.open(v6: v6, address: &storage, reusePort: false, what: "bind \(host):\(port)")
        var bound = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        isIPv6 = v6
        localPort = withUnsafePointer(to: &bound) { PeerAddress(storage: $0)?.port ?? port }
        self.bound = bound
    }

    /// The address the socket is bound to (`::` or `0.0.0.0` for every address).
    package var boundAddress: PeerAddress? { withUnsafePointer(to: bound) { PeerAddress(storage: $0) } }

    private init(fd: Int32, isIPv6: Bool, localPort: UInt16, bound: sockaddr_storage) {
        self.fd = fd
        self.isIPv6 = isIPv6
        self.localPort = localPort
        self.bound = bound
    }

    /// A second socket that sends from this one's address and port and never receives.
    ///
    /// The kernel frees each datagram sent as it delivers it, and wakes whoever waits on the sending
    /// socket for room to write: an `epoll` that watches this socket for input is such a waiter, so
    /// every datagram sent from it also takes that wait queue's lock and runs `epoll`'s callback, which
    /// a socket nobody waits on skips. The two share the port through `SO_REUSEPORT` (set on this
    /// socket after its own plain bind, so another process still cannot bind the port, nor a later
    /// bind to port 0 get it), and a steering program gives this socket every datagram that arrives.
    /// Throws when the kernel will not (no `SO_ATTACH_REUSEPORT_CBPF`); this socket is then as before.
    package func openSender() throws(SocketError) -> UDPSocket {
        var on: Int32 = 1
        guard setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
            throw SocketError(operation: "SO_REUSEPORT", code: errno)
        }
        var address = bound
        let sender: Int32
        do { sender = try Self.open(v6: isIPv6, address: &address, reusePort: true, what: "bind the sending socket") } catch {
            stopSharing()
            throw error
        }
        let code = sb_reuseport_steer_to_first(fd)
        guard code == 0 else {
            close(sender)
            stopSharing()
            throw SocketError(operation: "SO_ATTACH_REUSEPORT_CBPF", code: code)
        }
        return UDPSocket(fd: sender, isIPv6: isIPv6, localPort: localPort, bound: bound)
    }

    private func stopSharing() {
        var off: Int32 = 0
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &off, socklen_t(MemoryLayout<Int32>.size))
    }

    /// A non-blocking datagram socket with large buffers, bound to `address`; the descriptor or the error.
    private static func open(v6: Bool, address: inout sockaddr_storage, reusePort: Bool,
                             what: String) throws(SocketError) -> Int32 {
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue) | SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC, 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", code: errno) }
        var off: Int32 = 0, on: Int32 = 1
        if v6 { _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size)) }
        if reusePort { _ = setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, socklen_t(MemoryLayout<Int32>.size)) }
        // Don't fragment, and don't follow path-MTU news either (media datagrams stay under 1,200 bytes
        // plus headers): an IPv4 datagram with DF that the socket will not fragment gets IP ID 0, which
        // spares the kernel its per-destination ID counters (a hash and an atomic on a shared cache line
        // for every datagram sent to another listener). A dual-stack socket sends to mapped IPv4
        // addresses through the IPv4 path, so it takes both options.
        var probe = Int32(IP_PMTUDISC_PROBE)
        _ = setsockopt(fd, Int32(IPPROTO_IP), IP_MTU_DISCOVER, &probe, socklen_t(MemoryLayout<Int32>.size))
        if v6 {
            var probe6 = Int32(IPV6_PMTUDISC_PROBE)
            _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_MTU_DISCOVER, &probe6, socklen_t(MemoryLayout<Int32>.size))
        }
        // Bursts of fan-out output and video keyframes overrun the default 208 KiB.
        var size: Int32 = 4 << 20
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        let length = socklen_t(v6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw SocketError(operation: what, code: code)
        }
        return fd
    }

    deinit { close(fd) }
}
