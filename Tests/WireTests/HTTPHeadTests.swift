import Testing
@testable import Wire

@Suite("HTTP heads, headers and chunks")
struct HTTPHeadTests {
    @Test("header lookup ignores case and keeps order")
    func lookup() {
        var headers: HTTPHeaders = ["Content-Type": "text/plain", "Set-Cookie": "a=1"]
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers["content-type"] == "text/plain")
        #expect(headers.values(for: "SET-COOKIE") == ["a=1", "b=2"])
        headers.replaceOrAdd(name: "Set-Cookie", value: "c=3")
        #expect(headers.values(for: "set-cookie") == ["c=3"])
        #expect(headers.map(\.name) == ["Content-Type", "Set-Cookie"])
        headers["content-type"] = nil
        #expect(!headers.contains(name: "Content-Type"))
        headers["X-New"] = "1"
        #expect(headers.count == 2)
        headers.remove(name: "x-new")
        #expect(headers.count == 1)
    }

    @Test("list tokens are split, trimmed and lowercased")
    func tokens() {
        let headers: HTTPHeaders = ["Connection": "keep-alive , Upgrade", "connection": ",x"]
        #expect(headers.tokens(for: "connection") == ["keep-alive", "upgrade", "x"])
        #expect(headers.containsToken("UPGRADE", in: "Connection"))
    }

    @Test("a response head serializes with status line and reason phrase")
    func responseSerialization() {
        let head = HTTPResponseHead(status: 404, headers: ["Content-Length": "0"])
        #expect(String(decoding: head.serialized(), as: UTF8.self) == "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
        #expect(HTTPResponseHead.reasonPhrase(for: 431) == "Request Header Fields Too Large")
    }

    @Test("CR and LF in header values cannot inject fields")
    func injection() throws {
        let head = HTTPResponseHead(status: 302, headers: ["Location": "/x\r\nSet-Cookie: evil=1"])
        var parser = HTTPResponseParser()
        parser.append(contentsOf: head.serialized())
        guard case .head(let parsed)? = try parser.next() else { Issue.record("no head"); return }
        #expect(parsed.headers.count == 1)
        #expect(!parsed.headers.contains(name: "Set-Cookie"))
    }

    @Test("a request head serializes and parses back")
    func requestRoundTrip() throws {
        let head = HTTPRequestHead(method: .POST, target: "/v1/calls?x=1", headers: ["Host": "h", "Content-Length": "0"])
        var buffer: [UInt8] = []
        head.serialize(into: &buffer)
        var parser = HTTPRequestParser()
        parser.append(contentsOf: buffer)
        #expect(try parser.next() == .head(head))
        #expect(try parser.next() == .end)
    }

    @Test("chunk framing round-trips through the request parser")
    func chunks() throws {
        #expect(HTTPChunk.encode(bytes("hello world, this is long")) == bytes("19\r\nhello world, this is long\r\n"))
        #expect(HTTPChunk.encode([UInt8]()) == [])
        var body: [UInt8] = []
        HTTPChunk.encode(bytes("abc"), into: &body)
        HTTPChunk.encode(Array(repeating: 0x41, count: 300), into: &body)
        body += HTTPChunk.terminal
        let request = bytes("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n") + body
        let result = feedAllWays(request) { HTTPRequestParser() }
        #expect(result.events.dropFirst() == [.body(bytes("abc") + Array(repeating: 0x41, count: 300)), .end])
    }

    @Test("parse errors carry status, reason and connection handling")
    func errorShape() {
        let error = HTTPParseError(.requestLineTooLong, status: 414, detail: "long")
        #expect(error.reason == "URI Too Long")
        #expect(error.closesConnection)
        #expect(error.description == "414 URI Too Long: long")
    }
}
