import CShims
import Glibc
import Runtime

/// A listening IPv4 TCP socket for SIP, accepting on the endpoint's loop.
final class SIPTCPListener: Selectable {
    let fd: Int32
    let port: UInt16
    private let onAccept: (Int32, SIPPeer) -> Void

    init(host: String, port: UInt16, onAccept: @escaping (Int32, SIPPeer) -> Void) throws(SIPTransportError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC, 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        guard SIPUDPSocket.fill(&addr, host: host, port: port) else { Glibc.close(fd); throw .badAddress(host) }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { let e = errno; Glibc.close(fd); throw .system("bind tcp \(host):\(port)", e) }
        guard listen(fd, 256) == 0 else { let e = errno; Glibc.close(fd); throw .system("listen", e) }
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        self.fd = fd
        self.port = UInt16(bigEndian: bound.sin_port)
        self.onAccept = onAccept
    }

    deinit { Glibc.close(fd) }

    func handle(events: UInt32) {
        for _ in 0..<64 {
            var from = sockaddr_in()
            var len = socklen_t(MemoryLayout<sockaddr_in>.size)
            let cfd = withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sb_accept4(fd, $0, &len, SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC) }
            }
            guard cfd >= 0 else { return }
            var one: Int32 = 1
            setsockopt(cfd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            onAccept(cfd, SIPPeer(host: SIPUDPSocket.hostString(from.sin_addr), port: UInt16(bigEndian: from.sin_port), transport: .tcp))
        }
    }
}
