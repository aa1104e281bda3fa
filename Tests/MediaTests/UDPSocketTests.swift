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

    /// A worker sends from a second socket on its port (no epoll waiter to wake per datagram): what peers
    /// send to the port still reaches the receiving socket only, and what it sends comes from the port.
    @Test("the sending socket shares the port, receives nothing, and the port stays refused to others",
          arguments: ["127.0.0.1", "::"])
    func sendingSocket(host: String) throws {
        let socket = try UDPSocket(host: host, port: 0)
        let sender = try socket.openSender()
        #expect(sender.fd != socket.fd)
        #expect(sender.localPort == socket.localPort)
        #expect(throws: SocketError.self) { try UDPSocket(host: host, port: socket.localPort) }
        #expect(throws: SocketError.self) { try UDPSocket(host: "127.0.0.1", port: socket.localPort) }

        // Peers on many ports (the kernel would spread them over the group by a hash of the source).
        let peers = try (0..<16).map { _ in try UDPSocket(host: "127.0.0.1", port: 0) }
        let port = PeerAddress(host: "127.0.0.1", port: socket.localPort)!
        for (i, peer) in peers.enumerated() {
            for _ in 0..<4 { #expect(Self.send([UInt8(i)], from: peer, to: port)) }
        }
        #expect(Self.drain(socket, awaiting: 64).count == 64)
        // Everything sent has arrived by now; none of it on the sending socket.
        #expect(Self.drain(sender).isEmpty)

        // The sending socket's datagrams leave from the shared port.
        let peer = peers[0]
        #expect(Self.send([7, 7], from: sender, to: PeerAddress(host: "127.0.0.1", port: peer.localPort)!))
        var from = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        var buffer = [UInt8](repeating: 0, count: 64)
        var n = -1
        for _ in 0..<200 where n < 0 {
            n = buffer.withUnsafeMutableBytes { bytes in
                withUnsafeMutablePointer(to: &from) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        recvfrom(peer.fd, bytes.baseAddress, bytes.count, Int32(MSG_DONTWAIT), $0, &length)
                    }
                }
            }
            if n < 0 { usleep(1_000) }
        }
        #expect(n == 2)
        #expect(withUnsafePointer(to: &from) { PeerAddress(storage: $0)?.port } == socket.localPort)
    }

    /// Media datagrams say "don't fragment" and carry IP ID 0 (the kernel then skips its shared
    /// per-destination ID counters); a dual-stack socket's IPv4 datagrams alike. Seen on the wire
    /// through a raw socket when the test may open one, and through the socket options always.
    @Test("media datagrams leave with DF set and IP ID 0", arguments: ["127.0.0.1", "::"])
    func dontFragment(host: String) throws {
        let socket = try UDPSocket(host: host, port: 0)
        var value: Int32 = -1
        var length = socklen_t(MemoryLayout<Int32>.size)
        #expect(getsockopt(socket.fd, Int32(IPPROTO_IP), IP_MTU_DISCOVER, &value, &length) == 0)
        #expect(value == Int32(IP_PMTUDISC_PROBE))
        if socket.isIPv6 {
            #expect(getsockopt(socket.fd, Int32(IPPROTO_IPV6), IPV6_MTU_DISCOVER, &value, &length) == 0)
            #expect(value == Int32(IPV6_PMTUDISC_PROBE))
        }

        let raw = Glibc.socket(AF_INET, Int32(SOCK_RAW.rawValue), Int32(IPPROTO_UDP))
        guard raw >= 0 else { return }  // no CAP_NET_RAW: the options above are what can be seen
        defer { close(raw) }
        var timeout = timeval(tv_sec: 0, tv_usec: 20_000)
        _ = setsockopt(raw, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let peer = try UDPSocket(host: "127.0.0.1", port: 0)
        let marker: [UInt8] = [0x5b, 0x44, 0x46, 0x5d]
        // Sent a few times: other tests' datagrams share the raw socket's view of loopback.
        for _ in 0..<3 {
            #expect(Self.send(marker, from: socket, to: PeerAddress(host: "127.0.0.1", port: peer.localPort)!))
        }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var seen = 0
        for _ in 0..<2_000 where seen < 3 {
            let n = buffer.withUnsafeMutableBytes { recv(raw, $0.baseAddress, $0.count, 0) }
            guard n >= 28 else { continue }
            let headerLength = Int(buffer[0] & 0x0f) * 4
            guard n >= headerLength + 8 + marker.count else { continue }
            let sourcePort = UInt16(buffer[headerLength]) << 8 | UInt16(buffer[headerLength + 1])
            let destinationPort = UInt16(buffer[headerLength + 2]) << 8 | UInt16(buffer[headerLength + 3])
            guard sourcePort == socket.localPort, destinationPort == peer.localPort,
                  Array(buffer[(headerLength + 8)..<(headerLength + 8 + marker.count)]) == marker else { continue }
            #expect(buffer[6] & 0x40 != 0, "DF")
            #expect(buffer[4] == 0 && buffer[5] == 0, "IP ID \(buffer[4]) \(buffer[5])")
            seen += 1
        }
        #expect(seen == 3)
    }

    static func send(_ bytes: [UInt8], from socket: UDPSocket, to address: PeerAddress) -> Bool {
        var storage = sockaddr_storage()
        withUnsafeMutablePointer(to: &storage) { address.write(to: $0, ipv6Socket: socket.isIPv6) }
        let length = socklen_t(socket.isIPv6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
        return bytes.withUnsafeBytes { data in
            withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(socket.fd, data.baseAddress, data.count, 0, $0, length) }
            }
        } == bytes.count
    }

    /// The datagrams waiting on `socket` (each up to `size` bytes), waiting up to 2 s for `count` of them to arrive.
    static func drain(_ socket: UDPSocket, awaiting count: Int = 0, size: Int = 64) -> [[UInt8]] {
        var got: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: size)
        for _ in 0..<2_000 {
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n < 0 { break }
                got.append(Array(buffer[0..<n]))
            }
            if got.count >= count { break }
            usleep(1_000)
        }
        return got
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

    @Test("with runs, each receiver gets its datagrams in segmented sends and all of them arrive")
    func segmented() throws {
        let r = try UDPSendFloor.run(receivers: 10, payload: 1_000, seconds: 0.3, burstsPerSecond: 100, segments: 3,
                                     senderCPU: nil, receiverCPU: nil)
        #expect(r.sent > 0)
        #expect(r.sent % 30 == 0, "three datagrams for each of ten receivers per burst: \(r.sent)")
        #expect(r.received == r.sent)
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
