import CShims
import Glibc
import Runtime

/// A listening TCP socket for SIP over TCP or TLS (IPv4 or IPv6 by its address), accepting on the endpoint's
/// loop; accepted peers carry `transport`.
final class SIPTCPListener: Selectable {
    let fd: Int32
    let port: UInt16
    let transport: SIPTransportKind
    /// Set by the endpoint before the listener is registered.
    var onAccept: (Int32, SIPPeer) -> Void

    init(host: String, port: UInt16, transport: SIPTransportKind = .tcp, onAccept: @escaping (Int32, SIPPeer) -> Void) throws(SIPTransportError) {
        guard IPEndpoint.family(of: host) != nil else { throw .badAddress(host) }
        guard let (fd, bound) = IPEndpoint.boundSocket(type: Int32(SOCK_STREAM.rawValue), host: host, port: port,
                                                       flags: SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC, reuseAddress: true) else {
            throw .system("bind \(transport.rawValue.lowercased()) \(IPEndpoint.reference(host)):\(port)", errno)
        }
        guard listen(fd, 256) == 0 else { let e = errno; Glibc.close(fd); throw .system("listen", e) }
        self.fd = fd
        self.port = bound
        self.transport = transport
        self.onAccept = onAccept
    }

    deinit { Glibc.close(fd) }

    /// Whether a TCP listener could take `port` now (bound and let go at once).
    static func canBind(host: String, port: UInt16) -> Bool {
        guard let (fd, _) = IPEndpoint.boundSocket(type: Int32(SOCK_STREAM.rawValue), host: host, port: port,
                                                   flags: SB_SOCK_CLOEXEC, reuseAddress: true) else { return false }
        Glibc.close(fd)
        return true
    }

    func handle(events: UInt32) {
        for _ in 0..<64 {
            var from = sockaddr_storage()
            var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let cfd = withUnsafeMutablePointer(to: &from) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sb_accept4(fd, $0, &len, SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC) }
            }
            guard cfd >= 0 else { return }
            var one: Int32 = 1
            setsockopt(cfd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            let peer = IPEndpoint(storage: from, length: len)
            onAccept(cfd, SIPPeer(host: peer.host, port: peer.port, transport: transport))
        }
    }
}
