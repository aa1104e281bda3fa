import Testing
@testable import Wire

@Suite("HTTP request parser")
struct HTTPRequestParserTests {
    static func parse(_ text: String, limits: HTTPParserLimits = HTTPParserLimits()) -> FeedResult<HTTPParseEvent, HTTPParseError> {
        feedAllWays(bytes(text)) { HTTPRequestParser(limits: limits) }
    }

    static func head(_ result: FeedResult<HTTPParseEvent, HTTPParseError>, _ index: Int = 0) -> HTTPRequestHead? {
        guard result.events.indices.contains(index), case .head(let head) = result.events[index] else { return nil }
        return head
    }

    @Test("a simple GET yields head and end")
    func simpleGet() throws {
        let result = Self.parse("GET /rooms/1?x=1&y=2 HTTP/1.1\r\nHost: example.com\r\nAccept: */*\r\n\r\n")
        #expect(result.error == nil)
        #expect(result.events.count == 2)
        let head = try #require(Self.head(result))
        #expect(head.method == .GET)
        #expect(head.target == "/rooms/1?x=1&y=2")
        #expect(head.path == "/rooms/1")
        #expect(head.query == "x=1&y=2")
        #expect(head.version == .http1_1)
        #expect(head.headers["host"] == "example.com")
        #expect(head.headers["ACCEPT"] == "*/*")
        #expect(head.keepAlive)
        #expect(!head.hasBodyFraming)
        #expect(result.events.last == .end)
    }

    @Test("header values are trimmed of surrounding whitespace and keep inner spaces")
    func trimming() throws {
        let result = Self.parse("GET / HTTP/1.1\r\nHost:\t a b \t\r\nX-Empty:\r\n\r\n")
        let head = try #require(Self.head(result))
        #expect(head.headers["Host"] == "a b")
        #expect(head.headers["x-empty"] == "")
        #expect(head.query == nil)
    }

    @Test("a Content-Length body arrives whole however the input is split")
    func contentLengthBody() {
        let result = Self.parse("POST /v1/calls HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello world")
        #expect(result.error == nil)
        #expect(result.events.dropFirst() == [.body(bytes("hello world")), .end])
        #expect(Self.head(result)?.hasBodyFraming == true)
    }

    @Test("a chunked body is decoded, extensions ignored and trailers dropped")
    func chunkedBody() {
        let text = "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip-is-not-here, Chunked\r\n\r\n"
        #expect(Self.parse(text).error?.status == 501)
        let good = "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n6 ; a=\"b\"\r\n world\r\n0\r\nX-Trailer: yes\r\n\r\n"
        let result = Self.parse(good)
        #expect(result.error == nil)
        #expect(result.events.dropFirst() == [.body(bytes("hello world")), .end])
    }

    @Test("pipelined requests come out in order, bodies included")
    func pipelined() throws {
        let text = "GET /a HTTP/1.1\r\nHost: h\r\n\r\n"
            + "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabc"
            + "\r\n"  // a stray CRLF between requests is skipped
            + "PUT /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nxy\r\n0\r\n\r\n"
            + "DELETE /d HTTP/1.0\r\n\r\n"
        let result = Self.parse(text)
        #expect(result.error == nil)
        let targets = result.events.compactMap { event -> String? in
            if case .head(let head) = event { return head.target } else { return nil }
        }
        #expect(targets == ["/a", "/b", "/c", "/d"])
        #expect(result.events.filter { $0 == .end }.count == 4)
        #expect(result.events.contains(.body(bytes("abc"))))
        #expect(result.events.contains(.body(bytes("xy"))))
        let last = try #require(Self.head(result, result.events.count - 2))
        #expect(last.method == .DELETE)
        #expect(!last.keepAlive)
    }

    @Test("identical duplicate Content-Length values are accepted")
    func duplicateLengths() {
        let result = Self.parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nok")
        #expect(result.error == nil)
        #expect(result.events.dropFirst() == [.body(bytes("ok")), .end])
    }

    @Test("keep-alive follows version and Connection")
    func keepAlive() throws {
        let cases: [(String, Bool)] = [
            ("GET / HTTP/1.1\r\nHost: h\r\n\r\n", true),
            ("GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n", false),
            ("GET / HTTP/1.0\r\n\r\n", false),
            ("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", true),
        ]
        for (text, expected) in cases {
            #expect(Self.head(Self.parse(text))?.keepAlive == expected, "\(text)")
        }
    }

    @Test("Expect: 100-continue and Upgrade are recognised")
    func expectAndUpgrade() throws {
        let head = try #require(Self.head(Self.parse(
            "PUT /x HTTP/1.1\r\nHost: h\r\nExpect: 100-Continue\r\nContent-Length: 0\r\n\r\n")))
        #expect(head.expectsContinue)
        #expect(!head.isUpgrade)
        let upgrade = try #require(Self.head(Self.parse(
            "GET /ws HTTP/1.1\r\nHost: h\r\nConnection: keep-alive, Upgrade\r\nUpgrade: websocket\r\n\r\n")))
        #expect(upgrade.isUpgrade)
    }

    @Test("bytes after an upgrade request can be taken for the new protocol")
    func upgradeLeftovers() throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: bytes("GET /ws HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"))
        parser.append(contentsOf: [0x81, 0x80, 1, 2, 3, 4])
        guard case .head? = try parser.next() else { Issue.record("no head"); return }
        #expect(try parser.next() == .end)
        #expect(parser.bufferedByteCount == 6)
        #expect(parser.takeBufferedBytes() == [0x81, 0x80, 1, 2, 3, 4])
        #expect(parser.bufferedByteCount == 0)
    }

    @Test("a POST without framing has an empty body and says so")
    func noFraming() throws {
        let result = Self.parse("POST /x HTTP/1.1\r\nHost: h\r\n\r\n")
        #expect(result.events.count == 2)
        #expect(Self.head(result)?.hasBodyFraming == false)
    }

    @Test("lowering the body limit after the head rejects a larger body")
    func perRouteLimit() throws {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: bytes("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n0123456789"))
        guard case .head? = try parser.next() else { Issue.record("no head"); return }
        parser.setBodyLimit(5)
        #expect(throws: HTTPParseError.self) { try parser.next() }
        do {
            _ = try parser.next()
        } catch {
            #expect(error.status == 413)
        }

        var chunked = HTTPRequestParser()
        chunked.append(contentsOf: bytes("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n"))
        guard case .head? = try chunked.next() else { Issue.record("no head"); return }
        chunked.setBodyLimit(6)
        #expect(try chunked.next() == .body(bytes("abcd")))
        do {
            _ = try chunked.next()
            Issue.record("expected 413")
        } catch {
            #expect(error.status == 413 && error.kind == .bodyTooLarge)
        }
    }

    @Test("raising the body limit lets a large chunked body through")
    func raisedLimit() throws {
        let limits = HTTPParserLimits(maxBody: 4)
        var parser = HTTPRequestParser(limits: limits)
        parser.append(contentsOf: bytes("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n8\r\nabcdefgh\r\n0\r\n\r\n"))
        guard case .head? = try parser.next() else { Issue.record("no head"); return }
        parser.setBodyLimit(100)
        #expect(try parser.next() == .body(bytes("abcdefgh")))
        #expect(try parser.next() == .end)
    }

    @Test("buffered byte count reports the pipelined backlog")
    func backlog() throws {
        var parser = HTTPRequestParser()
        let one = bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        parser.append(contentsOf: one + one + one)
        #expect(parser.bufferedByteCount == one.count * 3)
        _ = try parser.next()
        _ = try parser.next()
        #expect(parser.bufferedByteCount == one.count * 2)
    }

    @Test("a failed parser keeps failing with the same error")
    func staysFailed() {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: bytes("GET / HTTP/2.0\r\n\r\n"))
        var first: HTTPParseError?
        do { _ = try parser.next() } catch { first = error }
        parser.append(contentsOf: bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n"))
        var second: HTTPParseError?
        do { _ = try parser.next() } catch { second = error }
        #expect(first != nil && first == second)
        #expect(first?.status == 505)
    }

    @Test("limits are enforced before the terminator arrives")
    func failFast() {
        var parser = HTTPRequestParser()
        parser.append(contentsOf: bytes("GET /") + Array(repeating: UInt8(ascii: "a"), count: 9000))
        #expect(throws: HTTPParseError.self) { try parser.next() }

        var headers = HTTPRequestParser()
        headers.append(contentsOf: bytes("GET / HTTP/1.1\r\nX: ") + Array(repeating: UInt8(ascii: "a"), count: 17000))
        do {
            _ = try headers.next()
            Issue.record("expected 431")
        } catch {
            #expect(error.status == 431)
        }
    }

    struct Malformed: CustomTestStringConvertible, Sendable {
        let name: String
        let input: String
        let status: Int
        let kind: HTTPParseError.Kind
        var testDescription: String { name }
    }

    static let longTarget = "/" + String(repeating: "a", count: 8200)
    static let manyHeaders = (0..<101).map { "X-\($0): v\r\n" }.joined()
    static let bigHeaders = (0..<20).map { "X-\($0): \(String(repeating: "v", count: 900))\r\n" }.joined()

    static let malformed: [Malformed] = [
        Malformed(name: "no spaces in request line", input: "GET\r\n\r\n", status: 400, kind: .invalidRequestLine),
        Malformed(name: "HTTP/0.9 request line", input: "GET /\r\n\r\n", status: 400, kind: .invalidRequestLine),
        Malformed(name: "two spaces", input: "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400, kind: .invalidTarget),
        Malformed(name: "method with bad char", input: "GE(T / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400, kind: .invalidMethod),
        Malformed(name: "empty method", input: " / HTTP/1.1\r\nHost: h\r\n\r\n", status: 400, kind: .invalidMethod),
        Malformed(name: "control char in target", input: "GET /a\u{1}b HTTP/1.1\r\nHost: h\r\n\r\n", status: 400, kind: .invalidTarget),
        Malformed(name: "lowercase version", input: "GET / http/1.1\r\nHost: h\r\n\r\n", status: 400, kind: .invalidVersion),
        Malformed(name: "version with garbage", input: "GET / HTTP/1.1x\r\nHost: h\r\n\r\n", status: 400, kind: .invalidVersion),
        Malformed(name: "HTTP/2.0", input: "GET / HTTP/2.0\r\nHost: h\r\n\r\n", status: 505, kind: .unsupportedVersion),
        Malformed(name: "HTTP/1.2", input: "GET / HTTP/1.2\r\nHost: h\r\n\r\n", status: 505, kind: .unsupportedVersion),
        Malformed(name: "bare LF ending", input: "GET / HTTP/1.1\nHost: h\n\n", status: 400, kind: .invalidLineEnding),
        Malformed(name: "bare LF in headers", input: "GET / HTTP/1.1\r\nHost: h\n\r\n", status: 400, kind: .invalidLineEnding),
        Malformed(name: "URI too long", input: "GET \(longTarget) HTTP/1.1\r\nHost: h\r\n\r\n", status: 414, kind: .requestLineTooLong),
        Malformed(name: "too many header fields", input: "GET / HTTP/1.1\r\nHost: h\r\n\(manyHeaders)\r\n", status: 431, kind: .tooManyHeaders),
        Malformed(name: "header section too large", input: "GET / HTTP/1.1\r\nHost: h\r\n\(bigHeaders)\r\n", status: 431, kind: .headerSectionTooLarge),
        Malformed(name: "obs-fold", input: "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n", status: 400, kind: .obsoleteLineFolding),
        Malformed(name: "space before colon", input: "GET / HTTP/1.1\r\nHost : h\r\n\r\n", status: 400, kind: .whitespaceBeforeColon),
        Malformed(name: "header without colon", input: "GET / HTTP/1.1\r\nHost h\r\n\r\n", status: 400, kind: .invalidHeaderName),
        Malformed(name: "bad header name char", input: "GET / HTTP/1.1\r\nHo(st: h\r\n\r\n", status: 400, kind: .invalidHeaderName),
        Malformed(name: "empty header name", input: "GET / HTTP/1.1\r\n: h\r\n\r\n", status: 400, kind: .invalidHeaderName),
        Malformed(name: "NUL in value", input: "GET / HTTP/1.1\r\nHost: h\0x\r\n\r\n", status: 400, kind: .invalidHeaderValue),
        Malformed(name: "bare CR in value", input: "GET / HTTP/1.1\r\nHost: h\rx\r\n\r\n", status: 400, kind: .invalidHeaderValue),
        Malformed(name: "DEL in value", input: "GET / HTTP/1.1\r\nHost: h\u{7F}\r\n\r\n", status: 400, kind: .invalidHeaderValue),
        Malformed(name: "missing Host in 1.1", input: "GET / HTTP/1.1\r\n\r\n", status: 400, kind: .missingHost),
        Malformed(name: "two Hosts", input: "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", status: 400, kind: .multipleHosts),
        Malformed(name: "CL and TE", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400, kind: .contentLengthWithTransferEncoding),
        Malformed(name: "differing CLs", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd", status: 400, kind: .conflictingContentLength),
        Malformed(name: "differing CL list", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3, 4\r\n\r\nabcd", status: 400, kind: .conflictingContentLength),
        Malformed(name: "negative CL", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", status: 400, kind: .invalidContentLength),
        Malformed(name: "non-numeric CL", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 0x10\r\n\r\n", status: 400, kind: .invalidContentLength),
        Malformed(name: "plus-signed CL", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: +5\r\n\r\n", status: 400, kind: .invalidContentLength),
        Malformed(name: "empty CL", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", status: 400, kind: .invalidContentLength),
        Malformed(name: "CL over body limit", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1048577\r\n\r\n", status: 413, kind: .bodyTooLarge),
        Malformed(name: "CL overflowing Int", input: "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", status: 413, kind: .bodyTooLarge),
        Malformed(name: "TE not ending in chunked", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", status: 400, kind: .invalidTransferEncoding),
        Malformed(name: "TE chunked twice", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", status: 400, kind: .invalidTransferEncoding),
        Malformed(name: "TE empty", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: ,\r\n\r\n", status: 400, kind: .invalidTransferEncoding),
        Malformed(name: "TE unknown coding before chunked", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", status: 501, kind: .unsupportedTransferEncoding),
        Malformed(name: "TE in HTTP/1.0", input: "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", status: 400, kind: .invalidTransferEncoding),
        Malformed(name: "chunk size not hex", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", status: 400, kind: .invalidChunk),
        Malformed(name: "chunk size empty", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", status: 400, kind: .invalidChunk),
        Malformed(name: "chunk size with sign", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n", status: 400, kind: .invalidChunk),
        Malformed(name: "chunk size trailing space", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5 \r\nhello\r\n0\r\n\r\n", status: 400, kind: .invalidChunk),
        Malformed(name: "chunk data without CRLF", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", status: 400, kind: .invalidChunk),
        Malformed(name: "chunk size overflowing Int", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffffffff\r\n", status: 413, kind: .bodyTooLarge),
        Malformed(name: "chunked over body limit", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n", status: 413, kind: .bodyTooLarge),
        Malformed(name: "control char in chunk extension", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1;a\u{1}\r\nx\r\n0\r\n\r\n", status: 400, kind: .invalidChunk),
        Malformed(name: "bad trailer", input: "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer\r\n\r\n", status: 400, kind: .invalidHeaderName),
    ]

    @Test("malformed requests map to the right status and close the connection", arguments: malformed)
    func malformedRequests(_ entry: Malformed) {
        let result = Self.parse(entry.input)
        #expect(result.error?.status == entry.status)
        #expect(result.error?.kind == entry.kind)
        #expect(result.error?.closesConnection == true)
    }

    @Test("trailers count against the header limits")
    func trailerLimits() {
        let limits = HTTPParserLimits(headerCount: 3)
        let result = Self.parse(
            "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nA: 1\r\nB: 2\r\n\r\n", limits: limits)
        #expect(result.error?.status == 431)
    }

    @Test("a request line at exactly the limit is accepted")
    func exactLimit() {
        let target = "/" + String(repeating: "a", count: 8192 - 13 - 1)
        let line = "GET \(target) HTTP/1.1"
        #expect(line.utf8.count == 8192)
        var parser = HTTPRequestParser()
        parser.append(contentsOf: bytes(line + "\r\nHost: h\r\n\r\n"))
        #expect(throws: Never.self) { _ = try parser.next() }
        var over = HTTPRequestParser()
        over.append(contentsOf: bytes("GET a" + target + " HTTP/1.1\r\nHost: h\r\n\r\n"))
        #expect(throws: HTTPParseError.self) { _ = try over.next() }
    }

    @Test("raw-buffer append feeds the same bytes")
    func rawAppend() throws {
        var parser = HTTPRequestParser()
        bytes("GET / HTTP/1.1\r\nHost: h\r\n\r\n").withUnsafeBytes { parser.append($0) }
        guard case .head(let head)? = try parser.next() else { Issue.record("no head"); return }
        #expect(head.path == "/")
    }

    @Test("an overlong line ending in a bare LF gets the same error however it is split")
    func overlongBareLF() {
        let limits = HTTPParserLimits(requestLine: 16)
        let result = Self.parse("GET /aaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\nHost: h\n\n", limits: limits)
        #expect(result.error?.status == 414)
    }
}
