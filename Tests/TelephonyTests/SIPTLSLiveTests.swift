import CShims
import Foundation
import Glibc
import Runtime
import Testing
import Wire
@testable import Telephony

/// A development CA and a server certificate for 127.0.0.1 in a directory of their own.
func testCertificate() throws -> DevelopmentCertificate {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("sip-tls-\(UUID().uuidString)").path
    return try DevelopmentCertificate.ensure(in: dir, hosts: ["localhost", "127.0.0.1"]).0
}

/// SIP over TLS with `certificate`, trusting `trust` (a CA file) when it connects out.
func tlsConfig(_ certificate: DevelopmentCertificate, trust: String? = nil, handshakeTimeout: Duration = .seconds(10)) throws -> SIPTLSConfig {
    SIPTLSConfig(port: 0, server: try TLSContext(certificateFile: certificate.certificateFile, keyFile: certificate.keyFile),
                 client: try TLSContext(clientCAFile: trust ?? certificate.caFile), handshakeTimeout: handshakeTimeout)
}

/// A SIP phone speaking over one TLS connection: Runtime's client TLS over a non-blocking socket, polled
/// with short sleeps (never blocking the test pool's thread), verifying the server against `caFile`.
final class TLSPhone {
    let fd: Int32
    let stream: TLSStream
    private var parser = SIPStreamParser()
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 8)

    init(port: UInt16, caFile: String) async throws {
        guard let fd = SIPTCPConnection.connect(to: SIPPeer(host: "127.0.0.1", port: port, transport: .tls)) else {
            throw SIPTransportError.badAddress("127.0.0.1")
        }
        self.fd = fd
        stream = try TLSStream(fd: fd, context: try TLSContext(clientCAFile: caFile), serverName: "127.0.0.1")
        // Connected once writable.
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            var p = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            if poll(&p, 1, 0) == 1 { break }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    deinit {
        buffer.deallocate()
        Glibc.close(fd)
    }

    /// Writes all of `text` (the handshake runs inside the first writes); false when the stream failed.
    func send(_ text: String) async throws -> Bool {
        let bytes = Array(text.utf8)
        var offset = 0
        let deadline = ContinuousClock.now + .seconds(20)
        while offset < bytes.count, ContinuousClock.now < deadline {
            let r = bytes.withUnsafeBytes { stream.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
            switch r {
            case .bytes(let n): offset += n
            case .wouldBlock:
                // The handshake may be waiting for the server's flight: reading moves it on.
                _ = stream.read(into: buffer)
                try await Task.sleep(for: .milliseconds(5))
            case .eof, .failed: return false
            }
        }
        return offset == bytes.count
    }

    /// The next message on the connection; nil when it closes or `timeout` passes.
    func receive(timeout: Duration = .seconds(20)) async throws -> SIPMessage? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let m = try parser.next() { return m }
            switch stream.read(into: buffer) {
            case .bytes(let n): parser.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
            case .wouldBlock: try await Task.sleep(for: .milliseconds(5))
            case .eof, .failed: return nil
            }
        }
        return nil
    }

    /// Bytes as they arrive, unparsed (for the keep-alive pong); empty when none came within `timeout`.
    func receiveRaw(timeout: Duration = .seconds(10)) async throws -> [UInt8] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            switch stream.read(into: buffer) {
            case .bytes(let n): return Array(buffer[0..<n])
            case .wouldBlock: try await Task.sleep(for: .milliseconds(5))
            case .eof, .failed: return []
            }
        }
        return []
    }

    /// The next final response (1xx skipped).
    func final(timeout: Duration = .seconds(20)) async throws -> SIPMessage? {
        while let m = try await receive(timeout: timeout) {
            if let s = m.status, s >= 200 { return m }
        }
        return nil
    }
}

/// Whether the server closed `fd` (a read sees EOF or a reset) within `timeout`, polling.
func closedByPeer(_ fd: Int32, within timeout: Duration) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    var scratch = [UInt8](repeating: 0, count: 4096)
    while ContinuousClock.now < deadline {
        let n = recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
        if n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) { return true }
        try await Task.sleep(for: .milliseconds(10))
    }
    return false
}

@Suite("SIP over TLS, live on loopback", .serialized)
struct SIPTLSLiveTests {
    static func request(_ method: String, uri: String, callID: String, cseq: Int = 1, localPort: UInt16 = 5999,
                        extra: String = "", body: String = "") -> String {
        "\(method) \(uri) SIP/2.0\r\nVia: SIP/2.0/TLS 127.0.0.1:\(localPort);branch=z9hG4bK-\(UInt32.random(in: 0...UInt32.max));rport\r\n"
            + "From: <sip:phone@127.0.0.1>;tag=t1\r\nTo: <sip:alice@127.0.0.1>\r\nCall-ID: \(callID)\r\nCSeq: \(cseq) \(method)\r\n"
            + "Max-Forwards: 70\r\n\(extra)Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    @Test("OPTIONS and REGISTER over TLS are answered on the same connection; the endpoint listens on its own TLS port")
    func optionsAndRegister() async throws {
        let cert = try testCertificate()
        let ep = try await LiveEndpoint(tls: tlsConfig(cert))
        try await ep.loop.submit {
            ep.endpoint.core.registrar = Registrar(secret: Array(repeating: 7, count: 32))
            ep.endpoint.core.deviceCredentials = { realm, user in user == "alice" ? DigestAlgorithm.md5.hex("alice:\(realm):s3cret") : nil }
        }
        let tlsPort = try #require(ep.endpoint.tlsPort)
        #expect(tlsPort != ep.port)
        let phone = try await TLSPhone(port: tlsPort, caFile: cert.caFile)
        #expect(try await phone.send(Self.request("OPTIONS", uri: "sip:alice@127.0.0.1", callID: "o1@tls")))
        let options = try #require(try await phone.final())
        #expect(options.status == 200)
        #expect(try options.topVia().transport == "TLS")
        // REGISTER without credentials: the registrar's challenge comes back over the same TLS connection.
        #expect(try await phone.send(Self.request("REGISTER", uri: "sip:127.0.0.1", callID: "r1@tls",
                                                  extra: "Contact: <sip:alice@127.0.0.1:5999;transport=tls>\r\nExpires: 60\r\n")))
        let challenge = try #require(try await phone.final())
        #expect(challenge.status == 401)
        let offered = try DigestChallenge.parse(try #require(challenge.headers[SIPHeaderName.wwwAuthenticate]))
        let answer = try DigestCredentials.answer(offered, username: "alice", password: "s3cret", method: .register,
                                                  uri: "sip:127.0.0.1", cnonce: "c0ffee")
        #expect(try await phone.send(Self.request("REGISTER", uri: "sip:127.0.0.1", callID: "r1@tls", cseq: 2,
                                                  extra: "Contact: <sip:alice@127.0.0.1:5999;transport=tls>\r\nExpires: 60\r\n"
                                                      + "Authorization: \(answer)\r\n")))
        let registered = try #require(try await phone.final())
        #expect(registered.status == 200)
        let bindings = try await ep.loop.submit { ep.endpoint.core.registrar?.lookup("alice@127.0.0.1", now: .now()) ?? [] }
        #expect(bindings.count == 1 && bindings.first?.source.transport == .tls)
        // An RFC 5626 keep-alive ping on the flow gets its pong.
        #expect(try await phone.send("\r\n\r\n"))
        #expect(try await phone.receiveRaw() == [13, 10])
        #expect(try await ep.loop.submit { ep.endpoint.tlsConnectionCount } == 1)
        #expect(ep.endpoint.snapshot.withLock { $0.tlsConnections } == 1)
        await ep.stop()
    }

    @Test("a call over TLS: 200 whose Contact says transport=tls and the TLS port, ACK and BYE on the same connection")
    func inviteOverTLS() async throws {
        let cert = try testCertificate()
        let ep = try await LiveEndpoint(tls: tlsConfig(cert))
        let tlsPort = try #require(ep.endpoint.tlsPort)
        let phone = try await TLSPhone(port: tlsPort, caFile: cert.caFile)
        let sdp = PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_020), sessionID: 9, version: 1).serialize()
        #expect(try await phone.send(Self.request("INVITE", uri: "sip:alice@127.0.0.1:\(tlsPort);transport=tls", callID: "c1@tls",
                                                  extra: "Contact: <sip:phone@127.0.0.1:5999;transport=tls>\r\nContent-Type: application/sdp\r\n",
                                                  body: sdp)))
        let ok = try #require(try await phone.final())
        #expect(ok.status == 200)
        let contact = try #require(try ok.contacts().first)
        #expect(contact.uri.transport == "tls")
        #expect(contact.uri.port == tlsPort)
        let toTag = try #require(try ok.to().tag)
        let inDialog = "Contact: <sip:phone@127.0.0.1:5999;transport=tls>\r\n"
        let ack = Self.request("ACK", uri: "sip:switchboard@127.0.0.1:\(tlsPort);transport=tls", callID: "c1@tls", extra: inDialog)
            .replacingOccurrences(of: "To: <sip:alice@127.0.0.1>", with: "To: <sip:alice@127.0.0.1>;tag=\(toTag)")
        #expect(try await phone.send(ack))
        #expect(await ep.wait { if case .connected = $0 { true } else { false } } != nil)
        let bye = Self.request("BYE", uri: "sip:switchboard@127.0.0.1:\(tlsPort);transport=tls", callID: "c1@tls", cseq: 2)
            .replacingOccurrences(of: "To: <sip:alice@127.0.0.1>", with: "To: <sip:alice@127.0.0.1>;tag=\(toTag)")
        #expect(try await phone.send(bye))
        #expect(try await phone.final()?.status == 200)
        #expect(await ep.wait { if case .ended(_, nil, "BYE") = $0 { true } else { false } } != nil)
        await ep.stop()
    }

    @Test("plaintext SIP on the TLS port and a client that never finishes its handshake are closed and counted; others are served meanwhile",
          .timeLimit(.minutes(1)))
    func badHandshakes() async throws {
        let cert = try testCertificate()
        // Long enough for a real client's handshake on a busy machine, short enough for the silent one to be closed soon.
        let ep = try await LiveEndpoint(tls: tlsConfig(cert, handshakeTimeout: .seconds(2)))
        let tlsPort = try #require(ep.endpoint.tlsPort)
        // A client that connects and says nothing holds no one up.
        let silent = try #require(SIPTCPConnection.connect(to: SIPPeer(host: "127.0.0.1", port: tlsPort)))
        defer { Glibc.close(silent) }
        // Plain SIP (garbage to TLS) on the TLS port.
        let plain = try #require(SIPTCPConnection.connect(to: SIPPeer(host: "127.0.0.1", port: tlsPort)))
        defer { Glibc.close(plain) }
        try await Task.sleep(for: .milliseconds(50))
        let garbage = Array(Self.request("OPTIONS", uri: "sip:alice@127.0.0.1", callID: "g1@tls").utf8)
        #expect(send(plain, garbage, garbage.count, Int32(MSG_NOSIGNAL)) == garbage.count)
        #expect(try await closedByPeer(plain, within: .seconds(5)))
        // Meanwhile a real TLS client is served.
        let phone = try await TLSPhone(port: tlsPort, caFile: cert.caFile)
        #expect(try await phone.send(Self.request("OPTIONS", uri: "sip:alice@127.0.0.1", callID: "o2@tls")))
        #expect(try await phone.final()?.status == 200)
        // The silent one is closed by the handshake timer.
        #expect(try await closedByPeer(silent, within: .seconds(5)))
        let counts = ep.endpoint.snapshot.withLock { ($0.tlsHandshakeFailures, $0.tlsHandshakeTimeouts, $0.tlsConnections) }
        #expect(counts.0 == 1 && counts.1 == 1 && counts.2 == 1, "\(counts)")
        // A client that had finished its handshake and goes away (no close_notify) is no handshake failure.
        let other = try await TLSPhone(port: tlsPort, caFile: cert.caFile)
        #expect(try await other.send(Self.request("OPTIONS", uri: "sip:alice@127.0.0.1", callID: "o3@tls")))
        #expect(try await other.final()?.status == 200)
        Glibc.shutdown(other.fd, Int32(SHUT_RDWR))
        try await Task.sleep(for: .milliseconds(300))
        #expect(ep.endpoint.snapshot.withLock { ($0.tlsHandshakeFailures, $0.tlsConnections) } == (1, 1))
        // After the handshake, garbage framing drops the stream as on TCP.
        #expect(try await phone.send("INVITE sip:x SIP/2.0\r\nContent-Length: nonsense\r\n\r\n"))
        #expect(try await phone.receive(timeout: .seconds(5)) == nil)
        await ep.stop()
    }

    @Test("outbound through a TLS trunk: the carrier's certificate verified, the call answered and hung up on one connection")
    func outboundTLSTrunk() async throws {
        let carrierCert = try testCertificate()
        let carrier = try await LiveEndpoint(tls: tlsConfig(carrierCert))
        let carrierTLS = try #require(carrier.endpoint.tlsPort)
        let trunk = TrunkConfig(name: "carrier", host: "127.0.0.1", port: carrierTLS, transport: .tls, healthInterval: 0)
        let ours = try testCertificate()
        let ep = try await LiveEndpoint(trunks: [trunk], tls: tlsConfig(ours, trust: carrierCert.caFile))
        let id = try await ep.loop.submit {
            ep.endpoint.invite(to: SIPURI(user: "15550199", host: "127.0.0.1", port: carrierTLS),
                               from: SIPAddress(uri: SIPURI(user: "switchboard", host: "127.0.0.1")),
                               sdp: PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_022), sessionID: 3, version: 1),
                               trunk: trunk)
        }
        #expect(await ep.wait { if case .connected(id, _) = $0 { true } else { false } } != nil)
        #expect(await carrier.wait { if case .incomingCall = $0 { true } else { false } } != nil)
        let open = try await ep.loop.submit { (ep.endpoint.tlsConnectionCount, ep.endpoint.connectionCount) }
        #expect(open.0 == 1 && open.1 == 1, "\(open)")
        try await ep.loop.submit { ep.endpoint.hangup(id) }
        #expect(await carrier.wait { if case .ended(_, nil, "BYE") = $0 { true } else { false } } != nil)
        #expect(await ep.wait { if case .ended(id, _, _) = $0 { true } else { false } } != nil)
        #expect(try await carrier.loop.submit { carrier.endpoint.tlsConnectionCount } == 1)
        await ep.stop()
        await carrier.stop()
    }

    @Test("a TLS trunk whose certificate is not trusted fails the call at once, nothing sent in clear", .timeLimit(.minutes(1)))
    func untrustedTrunk() async throws {
        let carrierCert = try testCertificate()
        let carrier = try await LiveEndpoint(tls: tlsConfig(carrierCert))
        let carrierTLS = try #require(carrier.endpoint.tlsPort)
        let trunk = TrunkConfig(name: "carrier", host: "127.0.0.1", port: carrierTLS, transport: .tls, healthInterval: 0)
        let ours = try testCertificate()
        // Trusts only its own CA, not the carrier's.
        let ep = try await LiveEndpoint(trunks: [trunk], tls: tlsConfig(ours))
        let started = ContinuousClock.now
        let id = try await ep.loop.submit {
            ep.endpoint.invite(to: SIPURI(user: "15550198", host: "127.0.0.1", port: carrierTLS),
                               from: SIPAddress(uri: SIPURI(user: "switchboard", host: "127.0.0.1")),
                               sdp: PlainRTPNegotiator.offer(AudioSessionConfig(address: "127.0.0.1", port: 40_024), sessionID: 4, version: 1),
                               trunk: trunk)
        }
        #expect(await ep.wait { if case .ended(id, _, _) = $0 { true } else { false } } != nil)
        #expect(ContinuousClock.now - started < .seconds(10))
        #expect(carrier.snapshot().isEmpty)
        #expect(ep.endpoint.snapshot.withLock { $0.tlsHandshakeFailures } == 1)
        await ep.stop()
        await carrier.stop()
    }
}
