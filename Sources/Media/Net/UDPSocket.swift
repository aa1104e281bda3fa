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

    package init(host: String, port: UInt16) throws(SocketError) {
        guard let address = PeerAddress(host: host, port: port) else {
            throw SocketError(operation: "parse \(host)", code: EINVAL)
        }
        let v6 = address.isIPv6 || host.contains(":")
        let fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_DGRAM.rawValue) | SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC, 0)
        guard fd >= 0 else { throw SocketError(operation: "socket", code: errno) }
        var off: Int32 = 0
        if v6 { _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &off, socklen_t(MemoryLayout<Int32>.size)) }
        // No SO_REUSEADDR: UDP has no TIME_WAIT to skip, and on Linux two sockets that both set it
        // may share a port, even one picked for port 0, and then split each other's datagrams.
        // Bursts of fan-out output and video keyframes overrun the default 208 KiB.
        var size: Int32 = 4 << 20
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        var storage = sockaddr_storage()
        withUnsafeMutablePointer(to: &storage) { address.write(to: $0, ipv6Socket: v6) }
        let length = socklen_t(v6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        let rc = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard rc == 0 else {
            let code = errno
            close(fd)
            throw SocketError(operation: "bind \(host):\(port)", code: code)
        }
        var bound = sockaddr_storage()
        var boundLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &boundLength) }
        }
        self.fd = fd
        self.isIPv6 = v6
        self.localPort = withUnsafePointer(to: &bound) { PeerAddress(storage: $0)?.port ?? port }
    }

    deinit { close(fd) }
}
