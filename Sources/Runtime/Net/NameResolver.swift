import Glibc
import Synchronization

/// Host names to addresses for the connections the server opens: webhooks, `stream` and `play` URLs,
/// WebSocket endpoints, SIP URIs, and a client's own server.
///
/// A numeric host (IPv4, IPv6, bracketed or not) is its own answer. A name goes through the system's
/// resolver (`getaddrinfo`: /etc/hosts, then DNS, as nsswitch.conf says), in the order it returns (RFC
/// 6724's), on threads of the resolver's own: a lookup blocks, and must stall neither an event loop nor
/// Swift's cooperative pool. The caller waits at most `timeout`; a lookup still running then finishes on
/// its thread and its answer is kept. Answers are kept for `ttl` (getaddrinfo gives no record's TTL; the
/// cache saves a lookup per webhook of a busy application), failures are not kept.
public final class NameResolver: Sendable {
    public static let shared = NameResolver()

    private struct Entry {
        var addresses: [SocketAddress]
        var expires: ContinuousClock.Instant
    }

    private let cache = Mutex([String: Entry]())
    private let pool: WorkPool
    private let ttl: Duration
    private let maxEntries = 1024

    public init(threads: Int = 4, ttl: Duration = .seconds(30)) {
        pool = WorkPool(threads: threads, name: "resolve")
        self.ttl = ttl
    }

    /// `host` itself when it is a numeric address (brackets removed), else nil.
    public static func numeric(_ host: String) -> String? {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, bare, &v4) == 1 || inet_pton(AF_INET6, bare, &v6) == 1 ? bare : nil
    }

    /// The addresses of `host` with `port`, best first; at least one, else `SocketError.unresolved`.
    public func addresses(of host: String, port: UInt16, timeout: Duration = .seconds(5)) async throws -> [SocketAddress] {
        if let numeric = Self.numeric(host) { return [SocketAddress(host: numeric, port: port)] }
        let name = host.lowercased()
        guard Self.isHostName(name) else { throw SocketError.unresolved(host, "not a host name") }
        let now = ContinuousClock.now
        if let hit = cache.withLock({ $0[name] }), hit.expires > now { return hit.addresses.map { SocketAddress(host: $0.host, port: port) } }
        let found = try await lookup(name, timeout: timeout)
        return found.map { SocketAddress(host: $0.host, port: port) }
    }

    /// `addresses(of:port:)` for a request with a whole deadline of `timeout`: the addresses and what is left of it.
    public func addresses(of host: String, port: UInt16, within timeout: Duration) async throws -> ([SocketAddress], left: Duration) {
        let started = ContinuousClock.now
        let found = try await addresses(of: host, port: port, timeout: timeout)
        return (found, timeout - (ContinuousClock.now - started))
    }

    private func lookup(_ name: String, timeout: Duration) async throws -> [SocketAddress] {
        let waiter = Waiter()
        return try await withCheckedThrowingContinuation { (cont: CheckedContinuation<[SocketAddress], Error>) in
            waiter.set(cont)
            let deadline = Task {
                try await Task.sleep(for: timeout)
                waiter.resume(.failure(SocketError.unresolved(name, "no answer within \(timeout)")))
            }
            Task(executorPreference: pool) { [self] in
                let result = Self.getaddrinfo(name)
                if case .success(let addresses) = result { keep(name, addresses) }
                deadline.cancel()
                waiter.resume(result)
            }
        }
    }

    private func keep(_ name: String, _ addresses: [SocketAddress]) {
        let expires = ContinuousClock.now + ttl
        cache.withLock { c in
            if c.count >= maxEntries {
                let now = ContinuousClock.now
                c = c.filter { $0.value.expires > now }
                if c.count >= maxEntries { c.removeAll(keepingCapacity: true) }
            }
            c[name] = Entry(addresses: addresses, expires: expires)
        }
    }

    /// A lowercased name of dot-separated labels, 1 to 253 characters in all (one final dot allowed); each
    /// label 1 to 63 letters, digits, hyphens or underscores, not starting or ending with a hyphen (RFC 1123).
    public static func isHostName(_ name: String) -> Bool {
        let bare = name.hasSuffix(".") ? name.dropLast() : Substring(name)
        return (1...253).contains(bare.utf8.count) && bare.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.first != "-" && label.last != "-"
                && label.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D || $0 == 0x5F }
        }
    }

    /// One blocking lookup (port 0; the caller sets the port).
    static func getaddrinfo(_ name: String) -> Result<[SocketAddress], Error> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let rc = Glibc.getaddrinfo(name, nil, &hints, &list)
        guard rc == 0 else { return .failure(SocketError.unresolved(name, String(cString: gai_strerror(rc)))) }
        defer { freeaddrinfo(list) }
        var found: [SocketAddress] = []
        var next = list
        while let info = next {
            if let sa = info.pointee.ai_addr {
                let storage = UnsafeMutableRawPointer(sa).assumingMemoryBound(to: sockaddr_storage.self)
                if let address = SocketAddress.from(storage), !found.contains(address) { found.append(address) }
            }
            next = info.pointee.ai_next
        }
        return found.isEmpty ? .failure(SocketError.unresolved(name, "no address")) : .success(found)
    }
}

/// Resumes a continuation once, from whichever of the lookup and the deadline comes first.
private final class Waiter: Sendable {
    private let state = Mutex<CheckedContinuation<[SocketAddress], Error>?>(nil)
    func set(_ c: CheckedContinuation<[SocketAddress], Error>) { state.withLock { $0 = c } }
    func resume(_ result: Result<[SocketAddress], Error>) {
        state.withLock { c in
            c?.resume(with: result)
            c = nil
        }
    }
}
