import Glibc

/// An IPv4 or IPv6 socket address.
public struct SocketAddress: Hashable, Sendable, CustomStringConvertible {
    public enum Family: Sendable { case v4, v6 }
    public var host: String

    /// Whether `host` names this machine only: 127.0.0.0/8, ::1, an IPv4-mapped 127 address, or localhost.
    public static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") || host.hasPrefix("::ffff:127.")
    }
    public var port: UInt16

    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port`, `[v6]:port` or `:port`.
    public init?(parsing text: String) {
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let h = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), let p = UInt16(rest.dropFirst()) else { return nil }
            self.init(host: h, port: p)
            return
        }
        guard let colon = text.lastIndex(of: ":"), let p = UInt16(text[text.index(after: colon)...]) else { return nil }
        var h = String(text[..<colon])
        if h.isEmpty { h = "0.0.0.0" }
        self.init(host: h, port: p)
    }

    public var family: Family { host.contains(":") ? .v6 : .v4 }

    /// This address as a client on this machine reaches it: a wildcard one (`0.0.0.0`, `::`) through loopback.
    public var locallyReachable: SocketAddress {
        SocketAddress(host: host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host, port: port)
    }
    public var description: String { family == .v6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// Calls `body` with a sockaddr for this address.
    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws -> R) throws -> R {
        switch family {
        case .v4:
            var a = sockaddr_in()
            a.sin_family = sa_family_t(AF_INET)
            a.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &a.sin_addr) == 1 else { throw SocketError.badAddress(host) }
            return try withUnsafePointer(to: &a) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        case .v6:
            var a = sockaddr_in6()
            a.sin6_family = sa_family_t(AF_INET6)
            a.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &a.sin6_addr) == 1 else { throw SocketError.badAddress(host) }
            return try withUnsafePointer(to: &a) {
                try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        }
    }

    /// Reads a sockaddr_storage filled by the kernel.
    static func from(_ storage: UnsafePointer<sockaddr_storage>) -> SocketAddress? {
        var buf = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch Int32(storage.pointee.ss_family) {
        case AF_INET:
            return storage.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { p in
                var addr = p.pointee.sin_addr
                inet_ntop(AF_INET, &addr, &buf, socklen_t(buf.count))
                return SocketAddress(host: String(nulTerminated: buf), port: UInt16(bigEndian: p.pointee.sin_port))
            }
        case AF_INET6:
            return storage.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { p in
                var addr = p.pointee.sin6_addr
                inet_ntop(AF_INET6, &addr, &buf, socklen_t(buf.count))
                return SocketAddress(host: String(nulTerminated: buf), port: UInt16(bigEndian: p.pointee.sin6_port))
            }
        default:
            return nil
        }
    }

    /// The local address a socket is bound to.
    static func local(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard rc == 0 else { return nil }
        return withUnsafePointer(to: &storage) { from($0) }
    }
}

public enum SocketError: Error, CustomStringConvertible, Sendable {
    case badAddress(String)
    case system(String, Int32)
    case timeout
    case closed
    /// A host name that did not resolve: the name and why (the resolver's words).
    case unresolved(String, String)

    public var description: String {
        switch self {
        case .badAddress(let h): return "not an IP address: \(h)"
        case .system(let call, let e): return "\(call): \(String(cString: strerror(e)))"
        case .timeout: return "timed out"
        case .closed: return "connection closed"
        case .unresolved(let name, let why): return "cannot resolve \(name): \(why)"
        }
    }
}
