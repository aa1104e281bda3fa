import Foundation
import Runtime
import Testing
import Wire

/// Malformed and oversized requests get the right status in the one JSON error shape, and the connection
/// closes where the message boundary is lost.
@Suite("HTTP server, errors and limits")
struct HTTPServerErrorTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var request: String
        var status: Int
        var closes: Bool
        var testDescription: String { name }
    }

    static let long = String(repeating: "a", count: 9000)
    static let cases: [Case] = [
        Case(name: "garbage request line", request: "GARBAGE\r\n\r\n", status: 400, closes: true),
        Case(name: "header without colon", request: "GET /hello HTTP/1.1\r\nHost: t\r\nBad header\r\n\r\n", status: 400, closes: true),
        Case(name: "missing Host on HTTP/1.1", request: "GET /hello HTTP/1.1\r\n\r\n", status: 400, closes: true),
        Case(name: "Content-Length with Transfer-Encoding",
             request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
             status: 400, closes: true),
        Case(name: "two differing Content-Lengths",
             request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", status: 400, closes: true),
        Case(name: "bad chunk size", request: "POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 400, closes: true),
        Case(name: "unknown route", request: "GET /nope HTTP/1.1\r\nHost: t\r\n\r\n", status: 404, closes: false),
        Case(name: "wrong method", request: "DELETE /echo HTTP/1.1\r\nHost: t\r\n\r\n", status: 405, closes: false),
        Case(name: "POST without length", request: "POST /echo HTTP/1.1\r\nHost: t\r\n\r\n", status: 411, closes: true),
        Case(name: "body over the default limit",
             request: "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 2000000\r\n\r\n", status: 413, closes: true),
        Case(name: "body over a route's limit", request: "POST /tiny HTTP/1.1\r\nHost: t\r\nContent-Length: 9\r\n\r\n123456789", status: 413, closes: true),
        Case(name: "chunked body over a route's limit",
             request: "POST /tiny HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n12345\r\n5\r\n67890\r\n0\r\n\r\n", status: 413, closes: true),
        Case(name: "request line over 8 KiB", request: "GET /\(long) HTTP/1.1\r\nHost: t\r\n\r\n", status: 414, closes: true),
        Case(name: "headers over 16 KiB",
             request: "GET /hello HTTP/1.1\r\nHost: t\r\nX-A: \(long)\r\nX-B: \(long)\r\n\r\n", status: 431, closes: true),
        Case(name: "more than 100 header fields",
             request: "GET /hello HTTP/1.1\r\nHost: t\r\n" + (0..<101).map { "X-\($0): v\r\n" }.joined() + "\r\n", status: 431, closes: true),
        Case(name: "HTTP/2.0 on an HTTP/1.1 port", request: "GET /hello HTTP/2.0\r\nHost: t\r\n\r\n", status: 505, closes: true),
        Case(name: "a handler that throws something unknown", request: "GET /boom HTTP/1.1\r\nHost: t\r\n\r\n", status: 500, closes: false),
    ]

    @Test("malformed or oversized requests get the right status", arguments: cases)
    func statuses(_ c: Case) async throws {
        let s = try LiveServer()
        let conn = try RawConnection(port: s.port)
        try conn.send(c.request)
        let r = try await conn.readResponse()
        #expect(r.status == c.status)
        #expect(r.header("content-type") == "application/json")
        let json = try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: Any]
        #expect(json?["type"] is String)
        #expect((json?["title"] as? String)?.isEmpty == false)
        #expect(json?["detail"] is String)
        if c.closes {
            #expect(r.header("connection") == "close")
            #expect(await conn.isClosedByPeer())
        } else {
            try conn.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            #expect(try await conn.readResponse().text == "hello")
        }
        await s.stop()
    }

    @Test("405 lists the allowed methods in Allow")
    func allow() async throws {
        let s = try LiveServer()
        let conn = try RawConnection(port: s.port)
        try conn.send("GET /echo HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try await conn.readResponse()
        #expect(r.status == 405)
        let allowed = Set((r.header("allow") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
        #expect(allowed == ["POST", "PUT"])
        await s.stop()
    }

    @Test("the error body is {type,title,detail} with a urn type")
    func errorShape() async throws {
        let s = try LiveServer()
        let conn = try RawConnection(port: s.port)
        try conn.send("GET /nope HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try await conn.readResponse()
        let json = try #require(try JSONSerialization.jsonObject(with: Data(r.body)) as? [String: String])
        #expect(json["type"] == "urn:switchboard:error:not-found")
        #expect(json["title"] == "Not Found")
        #expect(json["detail"]?.contains("/nope") == true)
        await s.stop()
    }

    @Test("a request head that does not arrive in time is 408 and the connection closes")
    func headerTimeout() async throws {
        var config = HTTPServerConfiguration()
        config.headerTimeout = .milliseconds(300)
        let s = try LiveServer(configuration: config)
        let conn = try RawConnection(port: s.port)
        try conn.send("GET /hello HTTP/1.1\r\nHost: t\r\n")
        let r = try await conn.readResponse()
        #expect(r.status == 408)
        #expect(await conn.isClosedByPeer())
        await s.stop()
    }

    @Test("a body that stops arriving is 408 too (slowloris on the body)")
    func bodyTimeout() async throws {
        var config = HTTPServerConfiguration()
        config.headerTimeout = .milliseconds(300)
        let s = try LiveServer(configuration: config)
        let conn = try RawConnection(port: s.port)
        try conn.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n12")
        let r = try await conn.readResponse(for: .POST)
        #expect(r.status == 408)
        #expect(await conn.isClosedByPeer())
        await s.stop()
    }

    @Test("a connection that never sends anything is closed silently after the header timeout")
    func silentConnection() async throws {
        var config = HTTPServerConfiguration()
        config.headerTimeout = .milliseconds(200)
        let s = try LiveServer(configuration: config)
        let conn = try RawConnection(port: s.port)
        #expect(await conn.isClosedByPeer(timeout: .seconds(30)))
        #expect(await conn.readToEOF().isEmpty)
        await s.stop()
    }

    @Test("an idle keep-alive connection is closed after the idle timeout, and not before")
    func idleTimeout() async throws {
        var config = HTTPServerConfiguration()
        config.idleTimeout = .seconds(1)
        let s = try LiveServer(configuration: config)
        let conn = try RawConnection(port: s.port)
        // The server's clock starts after the response, which is after `start`: a close seen sooner than
        // a second after `start` is early however slowly this test is scheduled.
        let start = ContinuousClock.now
        try conn.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await conn.readResponse().status == 200)
        #expect(await conn.isClosedByPeer(timeout: .seconds(30)))
        #expect(ContinuousClock.now - start >= .milliseconds(950))
        await s.stop()
    }
}
