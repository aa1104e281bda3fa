@testable import API
import Testing

@Suite("Where the media sockets bind")
struct MediaBindHostTests {
    @Test("a listen address that is not a wildcard is kept, whatever is announced")
    func listenAddress() {
        #expect(ServerConfiguration.mediaBindHost(listen: "127.0.0.1", announce: "203.0.113.9") == "127.0.0.1")
        #expect(ServerConfiguration.mediaBindHost(listen: "::1", announce: nil) == "::1")
    }

    @Test("on a wildcard, an announced address of this machine's own is bound, so answers leave from it")
    func ownAnnouncedAddress() {
        #expect(ServerConfiguration.mediaBindHost(listen: "0.0.0.0", announce: "127.0.0.1") == "127.0.0.1")
        #expect(ServerConfiguration.mediaBindHost(listen: "0.0.0.0", announce: "127.0.0.2") == "127.0.0.2")
    }

    @Test("on a wildcard, an address beyond a NAT (not this machine's) or none keeps the wildcard")
    func foreignAnnouncedAddress() {
        // 203.0.113.0/24 is documentation space (RFC 5737): no machine's own.
        #expect(ServerConfiguration.mediaBindHost(listen: "0.0.0.0", announce: "203.0.113.9") == "0.0.0.0")
        #expect(ServerConfiguration.mediaBindHost(listen: "0.0.0.0", announce: nil) == "0.0.0.0")
        #expect(ServerConfiguration.mediaBindHost(listen: "0.0.0.0", announce: "") == "0.0.0.0")
        #expect(ServerConfiguration.mediaBindHost(listen: "::", announce: "not-an-address") == "::")
    }
}
