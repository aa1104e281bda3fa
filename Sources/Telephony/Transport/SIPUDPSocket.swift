import CShims
import Glibc

/// A non-blocking UDP socket for SIP signalling, IPv4 or IPv6 by the address it binds (an IPv6 socket
/// also reaches IPv4 peers, v4-mapped, when bound to `::`).
final class SIPUDPSocket {
    let fd: Int32
    let port: UInt16
    let family: Int32

    init(host: String, port: UInt16) throws(SIPTransportError) {
        guard let family = IPEndpoint.family(of: host) else { throw .badAddress(host) }
        guard let (fd, bound) = IPEndpoint.boundSocket(type: Int32(SOCK_DGRAM.rawValue), host: host, port: port,
                                                       flags: SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC) else {
            throw .system("bind \(IPEndpoint.reference(host)):\(port)", errno)
        }
        self.fd = fd
        self.port = bound
        self.family = family
    }

    deinit { close(fd) }

    /// One datagram into `buffer`, or nil when none is waiting.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> (Int, SIPPeer)? {
        guard let (n, from) = IPEndpoint.receive(fd: fd, into: buffer) else { return nil }
        return (n, SIPPeer(host: from.host, port: from.port))
    }

    @discardableResult
    func send(_ bytes: [UInt8], to peer: SIPPeer) -> Bool {
        guard let address = IPEndpoint(host: peer.host, port: peer.port, family: family) else { return false }
        let n = bytes.withUnsafeBytes { buf in address.withSockAddr { sendto(fd, buf.baseAddress, buf.count, 0, $0, $1) } }
        return n == bytes.count
    }
}
