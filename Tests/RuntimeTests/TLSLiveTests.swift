import Foundation
import Runtime
import Testing
import Wire

/// HTTPS and wss:// with a development CA made in a temporary directory.
@Suite("TLS, live")
struct TLSLiveTests {
    static func devCertificate() throws -> (DevelopmentCertificate, String) {
        let dir = NSTemporaryDirectory() + "runtime-tls-\(UUID().uuidString)"
        let (cert, created) = try DevelopmentCertificate.ensure(in: dir, hosts: ["localhost", "127.0.0.1"])
        #expect(created)
        return (cert, dir)
    }

    @Test("our client fetches over HTTPS, verifying the server against the development CA")
    func https() async throws {
        let (cert, dir) = try Self.devCertificate()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try LiveServer(tls: TLSContext(certificateFile: cert.certificateFile, keyFile: cert.keyFile))
        let client = HTTPClient(group: s.group, tls: try TLSContext(clientCAFile: cert.caFile))
        let r = try await client.execute(HTTPClientRequest(method: .POST, url: "https://127.0.0.1:\(s.port)/echo", body: Array("secret".utf8)))
        #expect(r.status == 200 && r.text == "secret")
        let big = try await client.execute(HTTPClientRequest(method: .POST, url: "https://localhost:\(s.port)/echo",
                                                             body: [UInt8](repeating: 0x5A, count: 300_000)))
        #expect(big.body.count == 300_000)
        await s.stop()
    }

    @Test("a large HTTPS response arrives whole although the socket keeps refusing writes")
    func largeResponse() async throws {
        let (cert, dir) = try Self.devCertificate()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try LiveServer(tls: TLSContext(certificateFile: cert.certificateFile, keyFile: cert.keyFile))
        var client = HTTPClient(group: s.group, tls: try TLSContext(clientCAFile: cert.caFile))
        client.maxResponseBytes = 64 << 20
        let r = try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(s.port)/big-stream"), timeout: .seconds(60))
        #expect(r.status == 200)
        #expect(r.body.count == 32 << 20)
        #expect(r.body.allSatisfy { $0 == 0x61 })
        await s.stop()
    }

    @Test("a client that does not trust the CA refuses the connection")
    func untrusted() async throws {
        let (cert, dir) = try Self.devCertificate()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try LiveServer(tls: TLSContext(certificateFile: cert.certificateFile, keyFile: cert.keyFile))
        let client = HTTPClient(group: s.group, tls: try TLSContext(clientCAFile: nil))
        await #expect(throws: (any Error).self) {
            _ = try await client.execute(HTTPClientRequest(url: "https://127.0.0.1:\(s.port)/hello"), timeout: .seconds(3))
        }
        // The server is unharmed.
        let ok = HTTPClient(group: s.group, tls: try TLSContext(clientCAFile: cert.caFile))
        #expect(try await ok.send(.GET, "https://127.0.0.1:\(s.port)/hello").text == "hello")
        await s.stop()
    }

    @Test("wss:// echo through our client")
    func wss() async throws {
        let (cert, dir) = try Self.devCertificate()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try LiveServer(tls: TLSContext(certificateFile: cert.certificateFile, keyFile: cert.keyFile))
        let inbox = Inbox<WebSocketLiveTests.Event>()
        let ws = try await WebSocketClient.connect(url: "wss://127.0.0.1:\(s.port)/ws", group: s.group,
                                                   tls: try TLSContext(clientCAFile: cert.caFile),
                                                   callbacks: WebSocketLiveTests.collecting(inbox))
        ws.send(text: "over tls")
        let big = [UInt8](repeating: 3, count: 100_000)
        ws.send(binary: big)
        _ = try await inbox.first { $0 == .text("over tls") }
        _ = try await inbox.first { $0 == .binary(big) }
        ws.close()
        _ = try await inbox.first(where: WebSocketLiveTests.isClose)
        await s.stop()
    }

    @Test("plain HTTP sent to the TLS port does not wedge the server")
    func plaintextOnTLSPort() async throws {
        let (cert, dir) = try Self.devCertificate()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let s = try LiveServer(tls: TLSContext(certificateFile: cert.certificateFile, keyFile: cert.keyFile))
        let c = try RawConnection(port: s.port)
        try c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await c.isClosedByPeer())
        #expect(await eventually { s.server.connectionCount == 0 })
        await s.stop()
    }
}
