import Glibc

/// A numeric IPv4 or IPv6 address and port as the kernel takes it (`sockaddr_in` or `sockaddr_in6` in a
/// `sockaddr_storage`), for the SIP and RTP sockets. No name resolution: SIP hosts here are numeric.
struct IPEndpoint {
    private(set) var storage = sockaddr_storage()
    private(set) var length: socklen_t = 0

    /// `host` is a numeric address, IPv6 with or without brackets. `family` AF_INET6 writes an IPv4 host
    /// v4-mapped (`::ffff:a.b.c.d`), for a dual-stack IPv6 socket.
    init?(host: String, port: UInt16, family: Int32? = nil) {
        let bare = Self.bare(host)
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, bare, &v4) == 1 {
            if family == AF_INET6 {
                guard inet_pton(AF_INET6, "::ffff:" + bare, &v6) == 1 else { return nil }
                set(v6, port: port)
            } else {
                var a = sockaddr_in()
                a.sin_family = sa_family_t(AF_INET)
                a.sin_port = port.bigEndian
                a.sin_addr = v4
                withUnsafeMutableBytes(of: &storage) { s in withUnsafeBytes(of: &a) { s.copyMemory(from: $0) } }
                length = socklen_t(MemoryLayout<sockaddr_in>.size)
            }
        } else if inet_pton(AF_INET6, bare, &v6) == 1, family != AF_INET {
            set(v6, port: port)
        } else {
            return nil
        }
    }

    /// An endpoint the kernel filled (`recvfrom`, `accept`, `getsockname`).
    init(storage: sockaddr_storage, length: socklen_t) {
        self.storage = storage
        self.length = length
    }

    private mutating func set(_ address: in6_addr, port: UInt16) {
        var a = sockaddr_in6()
        a.sin6_family = sa_family_t(AF_INET6)
        a.sin6_port = port.bigEndian
        a.sin6_addr = address
        withUnsafeMutableBytes(of: &storage) { s in withUnsafeBytes(of: &a) { s.copyMemory(from: $0) } }
        length = socklen_t(MemoryLayout<sockaddr_in6>.size)
    }

    var family: Int32 { Int32(storage.ss_family) }

    var port: UInt16 {
        get {
            withUnsafeBytes(of: storage) { raw in
                family == AF_INET6 ? UInt16(bigEndian: raw.load(as: sockaddr_in6.self).sin6_port)
                                   : UInt16(bigEndian: raw.load(as: sockaddr_in.self).sin_port)
            }
        }
        set {
            // sin_port and sin6_port are both the two bytes right after the 16-bit family.
            withUnsafeMutableBytes(of: &storage) { $0.storeBytes(of: newValue.bigEndian, toByteOffset: 2, as: UInt16.self) }
        }
    }

    /// The numeric host, IPv6 without brackets; a v4-mapped address as plain IPv4 (a dual-stack socket's
    /// IPv4 peers keep the addresses trunks and allow-lists know them by).
    var host: String {
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        var s = storage
        withUnsafeMutableBytes(of: &s) { raw in
            if family == AF_INET6 {
                var a = raw.load(as: sockaddr_in6.self).sin6_addr
                inet_ntop(AF_INET6, &a, &text, socklen_t(text.count))
            } else {
                var a = raw.load(as: sockaddr_in.self).sin_addr
                inet_ntop(AF_INET, &a, &text, socklen_t(text.count))
            }
        }
        let string = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if string.hasPrefix("::ffff:"), string.dropFirst(7).contains(".") { return String(string.dropFirst(7)) }
        return string
    }

    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafePointer(to: storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, length) } }
    }

    /// Same family, address and port (compared as bytes: no formatting on the packet path).
    static func same(_ a: IPEndpoint, _ b: IPEndpoint) -> Bool {
        guard a.family == b.family, a.port == b.port else { return false }
        return withUnsafeBytes(of: a.storage) { x in
            withUnsafeBytes(of: b.storage) { y in
                if a.family == AF_INET6 {
                    let at = MemoryLayout<sockaddr_in6>.offset(of: \sockaddr_in6.sin6_addr) ?? 8
                    return x[at..<at + 16].elementsEqual(y[at..<at + 16])
                }
                let at = MemoryLayout<sockaddr_in>.offset(of: \sockaddr_in.sin_addr) ?? 4
                return x[at..<at + 4].elementsEqual(y[at..<at + 4])
            }
        }
    }

    /// AF_INET or AF_INET6 for a numeric host, nil otherwise.
    static func family(of host: String) -> Int32? {
        var v4 = in_addr()
        var v6 = in6_addr()
        let bare = bare(host)
        if inet_pton(AF_INET, bare, &v4) == 1 { return AF_INET }
        if inet_pton(AF_INET6, bare, &v6) == 1 { return AF_INET6 }
        return nil
    }

    /// `[::1]` → `::1`.
    static func bare(_ host: String) -> String {
        host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
    }

    /// A host as it goes in a URI, Via sent-by or `host:port`: IPv6 in brackets (RFC 3261 §25.1).
    static func reference(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }

    /// Receives one datagram into `buffer`: its length and source, nil when none is waiting.
    static func receive(fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> (Int, IPEndpoint)? {
        var from = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let n = withUnsafeMutablePointer(to: &from) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { recvfrom(fd, buffer.baseAddress, buffer.count, 0, $0, &len) }
        }
        guard n >= 0 else { return nil }
        return (n, IPEndpoint(storage: from, length: len))
    }

    /// A non-blocking socket of `type` bound to `host:port`; an IPv6 socket also takes IPv4 (dual stack when
    /// bound to `::`). nil (errno set) when it cannot be made or bound.
    static func boundSocket(type: Int32, host: String, port: UInt16, flags: Int32, reuseAddress: Bool = false) -> (fd: Int32, port: UInt16)? {
        guard let family = family(of: host), let address = IPEndpoint(host: host, port: port) else { return nil }
        let fd = socket(family, type | flags, 0)
        guard fd >= 0 else { return nil }
        var one: Int32 = 1, zero: Int32 = 0
        if reuseAddress { setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size)) }
        if family == AF_INET6 { setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &zero, socklen_t(MemoryLayout<Int32>.size)) }
        guard address.withSockAddr({ Glibc.bind(fd, $0, $1) }) == 0 else {
            let e = errno
            Glibc.close(fd)
            errno = e
            return nil
        }
        var bound = sockaddr_storage()
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &bound) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        return (fd, IPEndpoint(storage: bound, length: len).port)
    }
}
