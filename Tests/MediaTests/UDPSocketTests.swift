import Glibc
import Testing
@testable import Media
import MediaLoad

@Suite("UDP sockets")
struct UDPSocketTests {
    /// With SO_REUSEADDR, Linux hands the same ephemeral port to several sockets, which then
    /// receive each other's datagrams: load peers sharing a port mixed their ICE and DTLS.
    @Test("sockets bound to port 0 never share a port")
    func ephemeralPortsAreDistinct() throws {
        // Room for 1,500 descriptors (about 80 shared ports were expected before the fix).
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4096 {
            limit.rlim_cur = min(limit.rlim_max, 4096)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
        let count = min(1500, Int(limit.rlim_cur) - 500)
        var sockets: [UDPSocket] = []
        for _ in 0..<count { sockets.append(try UDPSocket(host: "127.0.0.1", port: 0)) }
        let ports = Set(sockets.map(\.localPort))
        #expect(ports.count == sockets.count)
    }

    @Test("a media port already in use is refused, not silently shared")
    func busyPortIsRefused() throws {
        let first = try UDPSocket(host: "127.0.0.1", port: 0)
        #expect(throws: SocketError.self) { try UDPSocket(host: "127.0.0.1", port: first.localPort) }
        #expect(throws: SocketError.self) { try UDPSocket(host: "0.0.0.0", port: first.localPort) }
    }
}

@Suite("UDP send floor")
struct UDPSendFloorTests {
    @Test("sends round-robin to every receiver over loopback and counts what they drained")
    func sendsAndDrains() throws {
        let r = try UDPSendFloor.run(receivers: 8, payload: 172, seconds: 0.3, senderCPU: nil, receiverCPU: nil)
        #expect(r.sent > 1_000)
        #expect(r.senderCPUSeconds > 0)
        // The drain polls with pauses, so a socket buffer may overflow now and then under load,
        // but most datagrams arrive.
        #expect(Double(r.received) > Double(r.sent) * 0.5)
        #expect(r.received <= r.sent)
    }

    @Test("paced, it sends one datagram per receiver per burst at the given rate, all received")
    func paced() throws {
        let r = try UDPSendFloor.run(receivers: 10, payload: 172, seconds: 0.5, burstsPerSecond: 200, senderCPU: nil, receiverCPU: nil)
        // 100 bursts of 10 due in half a second; the last may fall just past the end.
        #expect(r.sent % 10 == 0)
        #expect((900...1_010).contains(r.sent), "sent \(r.sent)")
        #expect(r.seconds >= 0.45)
        // The receivers wait in epoll and drain at their leisure: at this rate nothing overflows.
        #expect(r.received == r.sent)
    }
}
