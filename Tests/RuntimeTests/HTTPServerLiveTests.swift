import Foundation
import Runtime
import Testing
import Wire

/// The HTTP/1.1 server over real loopback sockets: framing, keep-alive, pipelining, streaming.
@Suite("HTTP server, live")
struct HTTPServerLiveTests {
    @Test("a keep-alive connection serves several requests in turn")
    func keepAlive() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        for _ in 0..<3 {
            try c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
            let r = try await c.readResponse()
            #expect(r.status == 200)
            #expect(r.text == "hello")
            #expect(r.header("connection") == nil)
        }
        #expect(await !c.isClosedByPeer(timeout: .milliseconds(50)))
        await s.stop()
    }

    @Test("pipelined requests are answered in the order they were sent, even when the first is slow")
    func pipelining() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n"
                   + "POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"
                   + "GET /json HTTP/1.1\r\nHost: t\r\n\r\n"
                   + "HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n"
                   + "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await c.readResponse().text == "done")
        #expect(try await c.readResponse(for: .POST).text == "abc")
        let json = try await c.readResponse()
        #expect(json.header("content-type") == "application/json")
        #expect(json.text == #"{"n":42,"ok":true}"#)
        let head = try await c.readResponse(for: .HEAD)
        #expect(head.body.isEmpty)
        #expect(try await c.readResponse().text == "hello")
        await s.stop()
    }

    @Test("a deep pipeline runs its handlers one at a time in the order sent and answers in that order")
    func deepPipeline() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        // More than the pipeline holds at once, with streamed responses among plain ones.
        let count = 3 * 16 + 5
        try c.send((0..<count).map { "GET /step/\($0) HTTP/1.1\r\nHost: t\r\n\r\n" }.joined())
        for n in 0..<count {
            let r = try await c.readResponse()
            #expect(r.status == 200 && r.text == "step \(n)")
        }
        #expect(s.state.steps.withLock { $0 } == Array(0..<count))
        #expect(s.state.stepsMostAtOnce.load(ordering: .relaxed) == 1)
        #expect(await !c.isClosedByPeer(timeout: .milliseconds(50)))
        await s.stop()
    }

    @Test("a malformed request behind pipelined ones is refused only after they are answered")
    func pipelinedParseError() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\nHost: t\r\n\r\nGARBAGE\r\n\r\n")
        #expect(try await c.readResponse().text == "done")
        #expect(try await c.readResponse().text == "hello")
        let refused = try await c.readResponse()
        #expect(refused.status == 400)
        #expect(await c.isClosedByPeer(timeout: .seconds(5)))
        await s.stop()
    }

    @Test("Expect: 100-continue behind a pipelined request gets its 100 Continue only after the earlier response")
    func pipelinedExpectContinue() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\nPOST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        #expect(try await c.readResponse().text == "done")
        let interim = try await c.readResponse(for: .POST)
        #expect(interim.status == 100)
        try c.send("ping")
        let r = try await c.readResponse(for: .POST)
        #expect(r.status == 200 && r.text == "ping")
        await s.stop()
    }

    @Test("a WebSocket upgrade pipelined behind a request is answered after it, and the bytes after it are frames")
    func pipelinedUpgrade() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        let upgrade = "GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try c.send(Array(("GET /slow HTTP/1.1\r\nHost: t\r\n\r\n" + upgrade).utf8)
                   + WebSocketFrame(fin: true, opcode: .text, payload: Array("hi".utf8)).serialized(maskingKey: 0x0102_0304))
        #expect(try await c.readResponse().text == "done")
        let switched = try await c.readResponse()
        #expect(switched.status == 101)
        c.adoptLeftover()
        let echoed = try await c.readFrame()
        #expect(echoed.map { String(decoding: $0.payload, as: UTF8.self) } == "hi")
        await s.stop()
    }

    @Test("a Content-Length body and a chunked body both reach the handler whole")
    func requestBodies() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nhello world")
        let a = try await c.readResponse(for: .POST)
        #expect(a.status == 200 && a.text == "hello world" && a.header("content-type") == "text/plain")
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4;ext=1\r\ndefg\r\n0\r\nX-Trailer: y\r\n\r\n")
        let b = try await c.readResponse(for: .POST)
        #expect(b.status == 200 && b.text == "abcdefg")
        // A body dribbled byte by byte is still one body.
        let request = Array("PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\n12345".utf8)
        for byte in request { try c.send([byte]) }
        #expect(try await c.readResponse(for: .PUT).text == "12345")
        await s.stop()
    }

    @Test("a streamed response arrives chunked and complete, and the connection stays usable")
    func streamedResponse() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try await c.readResponse()
        #expect(r.header("transfer-encoding") == "chunked")
        #expect(r.header("content-length") == nil)
        #expect(r.text == "onetwothree")
        try c.send("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await c.readResponse().text == "hello")
        await s.stop()
    }

    @Test("HEAD gets the GET headers and no body bytes at all")
    func head() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("HEAD /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        let r = try await c.readResponse(for: .HEAD)
        #expect(r.status == 200)
        #expect(r.header("content-length") == "5")
        #expect(r.body.isEmpty)
        // Anything after the head would be read as the start of the next response.
        try c.send("GET /json HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await c.readResponse().status == 200)
        await s.stop()
    }

    @Test("Expect: 100-continue gets 100 Continue before the body is sent, then the response")
    func expectContinue() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
        let interim = try await c.readResponse(for: .POST)
        #expect(interim.status == 100)
        try c.send("ping")
        let r = try await c.readResponse(for: .POST)
        #expect(r.status == 200 && r.text == "ping")
        await s.stop()
    }

    @Test("HTTP/1.0 closes after the response unless it asks for keep-alive")
    func http10() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        let r = try await c.readResponse()
        #expect(r.header("connection")?.lowercased() == "keep-alive")
        try c.send("GET /hello HTTP/1.0\r\n\r\n")
        #expect(try await c.readResponse().text == "hello")
        #expect(await c.isClosedByPeer())
        await s.stop()
    }

    @Test("Connection: close is honoured after the response")
    func connectionClose() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        let r = try await c.readResponse()
        #expect(r.header("connection") == "close")
        #expect(await c.isClosedByPeer())
        await s.stop()
    }

    @Test("a peer that stops reading a large streamed body slows the producer instead of growing the queue")
    func streamBackpressure() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port, receiveBuffer: 4096)
        try c.send("GET /big-stream HTTP/1.1\r\nHost: t\r\n\r\n")
        try await Task.sleep(for: .milliseconds(500))
        // Without backpressure all 512 blocks (32 MiB) would be queued by now; with it, only what the socket
        // buffers hold (a few MiB) plus the 256 KiB high-water mark.
        let written = s.state.streamBlocks.load(ordering: .relaxed)
        #expect(written < 160, "\(written) blocks of 64 KiB written to a peer that reads nothing")
        // Once the peer reads, the rest follows.
        let r = try await c.readResponse(timeout: .seconds(30))
        #expect(r.body.count == 32 << 20)
        await s.stop()
    }

    @Test("handlers run off the event loops unless their route opts in to the loop")
    func executors() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /where HTTP/1.1\r\nHost: t\r\n\r\nGET /where-on-loop HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await c.readResponse().text == "pool")
        #expect(try await c.readResponse().text == "loop")
        try c.send("GET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET /stream HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(try await c.readResponse().text == "done")
        #expect(try await c.readResponse().text == "onetwothree")
        await s.stop()
    }

    @Test("our HTTPClient talks to the server")
    func client() async throws {
        let s = try LiveServer()
        let client = HTTPClient(group: s.group)
        let r = try await client.execute(HTTPClientRequest(method: .POST, url: s.base + "/echo", body: Array("x=1".utf8)))
        #expect(r.status == 200 && r.text == "x=1")
        let j = try await client.send(.GET, s.base + "/json")
        #expect(j.status == 200 && j.text.contains("42"))
        let h = try await client.execute(HTTPClientRequest(method: .HEAD, url: s.base + "/hello"))
        #expect(h.status == 200 && h.body.isEmpty)
        let st = try await client.send(.GET, s.base + "/stream")
        #expect(st.text == "onetwothree")
        await s.stop()
    }
}
