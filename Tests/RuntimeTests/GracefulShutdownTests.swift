import Foundation
import Runtime
import Testing
import Wire

@Suite("Graceful shutdown, live")
struct GracefulShutdownTests {
    /// Other tests running beside these can hold the machine's cores for seconds: the grace deadlines here
    /// are far above that (LiveServer's request deadline too), and shutdown ends as soon as the connections close.
    static func server() throws -> LiveServer { try LiveServer() }

    @Test("an in-flight request completes, new connections are refused, and WebSockets get 1001")
    func drain() async throws {
        let s = try Self.server()
        let inbox = Inbox<WebSocketLiveTests.Event>()
        _ = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(s.port)/ws", group: s.group,
                                              callbacks: WebSocketLiveTests.collecting(inbox))
        let idle = try RawConnection(port: s.port)
        let busy = try RawConnection(port: s.port)
        try busy.send("GET /gated HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(await eventually { s.state.gatedStarted.load(ordering: .relaxed) == 1 })

        let server = s.server
        let finished = Task { await server.shutdown(gracePeriod: .seconds(120)) }
        #expect(await eventually { RawConnection.isRefused(port: s.port) })
        #expect(try await inbox.first(where: WebSocketLiveTests.isClose) == .close(1001))
        #expect(await idle.isClosedByPeer())
        #expect(s.server.connectionCount == 1)

        s.state.gateOpen.store(true, ordering: .relaxed)
        let r = try await busy.readResponse()
        #expect(r.status == 200 && r.text == "done")
        #expect(r.header("connection") == "close")
        #expect(await busy.isClosedByPeer())
        await finished.value
        #expect(s.server.connectionCount == 0)
        s.group.shutdown()
    }

    @Test("a request whose body is half sent when shutdown starts still completes")
    func halfBody() async throws {
        let s = try Self.server()
        let c = try RawConnection(port: s.port)
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n12345")
        try await Task.sleep(for: .milliseconds(50))
        let server = s.server
        let finished = Task { await server.shutdown(gracePeriod: .seconds(120)) }
        #expect(await eventually { RawConnection.isRefused(port: s.port) })
        try c.send("67890")
        let r = try await c.readResponse(for: .POST)
        #expect(r.status == 200 && r.text == "1234567890", "\(r.status) \(r.text)")
        #expect(await c.isClosedByPeer())
        await finished.value
        s.group.shutdown()
    }

    @Test("connections still open at the deadline are closed")
    func deadline() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("POST /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 10\r\n\r\n12345")
        try await Task.sleep(for: .milliseconds(50))
        let start = ContinuousClock.now
        await s.server.shutdown(gracePeriod: .milliseconds(300))
        // Without the grace deadline the connection would wait for the body until the 120 s request deadline;
        // half of that leaves room for a run whose other tests hold both cores (15 s has been seen).
        #expect(ContinuousClock.now - start < .seconds(60))
        #expect(await c.isClosedByPeer())
        s.group.shutdown()
    }
}
