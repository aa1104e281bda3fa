import Runtime
import Testing

@Suite("Name resolution for outgoing connections")
struct NameResolverTests {
    /// One pool of lookup threads for the suite (a resolver's threads live as long as the process).
    static let resolver = NameResolver(threads: 1)

    @Test("numeric hosts are their own answer, brackets removed, with the caller's port")
    func numericHosts() async throws {
        let resolver = Self.resolver
        #expect(try await resolver.addresses(of: "192.0.2.7", port: 80) == [SocketAddress(host: "192.0.2.7", port: 80)])
        #expect(try await resolver.addresses(of: "[2001:db8::1]", port: 5060) == [SocketAddress(host: "2001:db8::1", port: 5060)])
        #expect(try await resolver.addresses(of: "::1", port: 443) == [SocketAddress(host: "::1", port: 443)])
        #expect(NameResolver.numeric("hooks.example.com") == nil)
        #expect(NameResolver.numeric("1.2.3") == nil)
    }

    @Test("a name goes through the system's resolver (localhost from /etc/hosts), twice with the cache")
    func localhost() async throws {
        let resolver = Self.resolver
        for port: UInt16 in [8080, 9090] {
            let found = try await resolver.addresses(of: "LOCALHOST", port: port)
            #expect(!found.isEmpty)
            #expect(found.allSatisfy { SocketAddress.isLoopback($0.host) && $0.port == port })
        }
    }

    @Test("what is not a host name is refused before any lookup", arguments: [
        "", "a..b", "-", "-a.example", "a-.example", "host name", "hooks.example.com/answer", "user@host", String(repeating: "a", count: 64) + ".com",
        String(repeating: "a.", count: 127) + "aa",
    ])
    func notHostNames(_ name: String) async throws {
        let resolver = Self.resolver
        await #expect(throws: SocketError.self) { try await resolver.addresses(of: name, port: 80) }
    }
}
