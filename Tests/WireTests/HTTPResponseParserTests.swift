import Testing
@testable import Wire

@Suite("HTTP response parser")
struct HTTPResponseParserTests {
    static func parse(_ text: String, method: HTTPMethod = .GET) -> FeedResult<HTTPResponseParseEvent, HTTPParseError> {
        feedAllWays(bytes(text)) {
            var parser = HTTPResponseParser()
            parser.requestMethod = method
            return parser
        }
    }

    @Test("Content-Length and chunked responses decode in sequence")
    func lengthAndChunked() {
        let text = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
            + "HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
            + "HTTP/1.1 204 No Content\r\n\r\n"
        let result = Self.parse(text)
        #expect(result.error == nil)
        #expect(result.events == [
            .head(HTTPResponseHead(status: 200, headers: ["Content-Length": "2"])), .body(bytes("hi")), .end,
            .head(HTTPResponseHead(status: 201, headers: ["Transfer-Encoding": "chunked"])), .body(bytes("abc")), .end,
            .head(HTTPResponseHead(status: 204)), .end,
        ])
    }

    @Test("a response without framing is read until the connection closes")
    func untilClose() throws {
        var parser = HTTPResponseParser()
        parser.append(contentsOf: bytes("HTTP/1.0 200 OK\r\n\r\nsome"))
        guard case .head(let head)? = try parser.next() else { Issue.record("no head"); return }
        #expect(!head.keepAlive)
        #expect(try parser.next() == .body(bytes("some")))
        #expect(try parser.next() == nil)
        parser.append(contentsOf: bytes(" more"))
        #expect(try parser.next() == .body(bytes(" more")))
        #expect(try parser.finish() == .end)
        #expect(try parser.finish() == nil)
    }

    @Test("a HEAD response has no body despite Content-Length")
    func headResponse() {
        let result = Self.parse("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", method: .HEAD)
        #expect(result.events.count == 2)
        #expect(result.events.last == .end)
    }

    @Test("the reason phrase may be empty or missing")
    func emptyReason() {
        for text in ["HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n", "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n"] {
            let result = Self.parse(text)
            #expect(result.error == nil, "\(text)")
            if case .head(let head)? = result.events.first { #expect(head.reason == "") }
        }
    }

    @Test("101 stops parsing and hands over the following bytes")
    func switching() throws {
        var parser = HTTPResponseParser()
        parser.append(contentsOf: bytes("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n") + [0x81, 0x00])
        guard case .head(let interim)? = try parser.next() else { Issue.record("no head"); return }
        #expect(interim.status == 100)
        #expect(try parser.next() == .end)
        guard case .head(let switched)? = try parser.next() else { Issue.record("no head"); return }
        #expect(switched.status == 101)
        #expect(parser.hasSwitchedProtocols)
        #expect(try parser.next() == nil)
        #expect(parser.takeBufferedBytes() == [0x81, 0x00])
    }

    @Test("a connection closed inside a response is an error")
    func truncated() {
        var parser = HTTPResponseParser()
        parser.append(contentsOf: bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab"))
        _ = try? parser.next()
        _ = try? parser.next()
        #expect(throws: HTTPParseError.self) { _ = try parser.finish() }
    }

    @Test("malformed status lines are rejected", arguments: [
        "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 20 OK\r\n\r\n", "HTTP/1.1 abc OK\r\n\r\n", "HTTP/1.1\r\n\r\n",
        "ICY 200 OK\r\n\r\n", "HTTP/1.1 099 Low\r\n\r\n",
    ])
    func badStatusLines(_ text: String) {
        #expect(Self.parse(text).error?.kind == .invalidStatusLine)
    }

    @Test("a response body over the limit fails with 413")
    func bodyLimit() {
        let limits = HTTPParserLimits(maxBody: 4)
        let result = feedAllWays(bytes("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nabcde")) { HTTPResponseParser(limits: limits) }
        #expect(result.error?.status == 413)
    }

    @Test("a serialized head parses back to the same head")
    func roundTrip() {
        let head = HTTPResponseHead(status: 418, headers: ["Content-Length": "0", "X-Thing": "a, b"])
        let result = feedAllWays(head.serialized()) { HTTPResponseParser() }
        #expect(result.events == [.head(HTTPResponseHead(status: 418, reason: "Unknown", headers: head.headers)), .end])
    }

    @Test("a read-until-close body over the limit delivers the limit, then fails, however it is split")
    func untilCloseLimit() {
        let limits = HTTPParserLimits(maxBody: 4)
        let result = feedAllWays(bytes("HTTP/1.0 200 OK\r\n\r\nabcdef")) { HTTPResponseParser(limits: limits) }
        #expect(result.events.dropFirst() == [.body(bytes("abcd"))])
        #expect(result.error?.status == 413)
    }
}
