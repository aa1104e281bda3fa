import Runtime
import Testing
import Wire

@Suite("Static files, live")
struct StaticFilesLiveTests {
    @Test("a file is served with its content type and an ETag; If-None-Match with that ETag is 304 with no body")
    func etag() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /static/site.css HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try await c.readResponse()
        #expect(r.status == 200)
        #expect(r.header("content-type") == "text/css; charset=utf-8")
        #expect(r.text == "body { color: red; }\n")
        let etag = try #require(r.header("etag"))
        #expect(etag.hasPrefix("\"") && etag.hasSuffix("\""))
        try c.send("GET /static/site.css HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"other\", \(etag)\r\n\r\n")
        let again = try await c.readResponse()
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.header("etag") == etag)
        try c.send("GET /static/site.css HTTP/1.1\r\nHost: t\r\nIf-None-Match: \"stale\"\r\n\r\n")
        #expect(try await c.readResponse().status == 200)
        await s.stop()
    }

    @Test("a directory serves its index.html")
    func index() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /static/ HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try await c.readResponse()
        #expect(r.status == 200)
        #expect(r.header("content-type") == "text/html; charset=utf-8")
        await s.stop()
    }

    @Test("paths that climb out of the root, hidden files and missing files are 404",
          arguments: ["/static/../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd", "/static/.hidden", "/static/missing.js"])
    func outside(_ path: String) async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await c.readResponse().status == 404)
        await s.stop()
    }
}
