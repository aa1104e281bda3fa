import CShims
import Glibc

/// A non-blocking IPv4 UDP socket for SIP signalling.
final class SIPUDPSocket {
    let fd: Int32
    let port: UInt16

    init(host: String, port: UInt16) throws(SIPTransportError) {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue) | SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC, 0)
        guard fd >= 0 else { throw .system("socket", errno) }
        var addr = sockaddr_in()
        guard Self.fill(&addr, host: host, port: port) else { close(fd); throw .badAddress(host) }
        let rc = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard rc == 0 else { let e = errno; close(fd); throw .system("bind \(host):\(port)", e) }
        var bound = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        self.fd = fd
        self.port = UInt16(bigEndian: bound.sin_port)
    }

    deinit { close(fd) }

    static func fill(_ addr: inout sockaddr_in, host: String, port: UInt16) -> Bool {
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        return inet_pton(AF_INET, host, &addr.sin_addr) == 1
    }

    /// One datagram into `buffer`, or nil when none is waiting.
    func receive(into buffer: UnsafeMutableRawBufferPointer) -> (Int, SIPPeer)? {
        var from = sockaddr_in()
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let n = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, buffer.baseAddress, buffer.count, 0, $0, &len) }
        }
        guard n >= 0 else { return nil }
        return (n, SIPPeer(host: Self.hostString(from.sin_addr), port: UInt16(bigEndian: from.sin_port)))
    }

    static func hostString(_ address: in_addr) -> String {
        var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN) + 1)
        var a = address
        inet_ntop(AF_INET, &a, &text, socklen_t(text.count))
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @discardableResult
    func send(_ bytes: [UInt8], to peer: SIPPeer) -> Bool {
        var addr = sockaddr_in()
        guard Self.fill(&addr, host: peer.host, port: peer.port) else { return false }
        let n = bytes.withUnsafeBytes { buf in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buf.baseAddress, buf.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        return n == bytes.count
    }
}
