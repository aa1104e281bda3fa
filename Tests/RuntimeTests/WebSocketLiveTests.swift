import Foundation
import Runtime
import Testing
import Wire

/// RFC 6455 over real sockets: our client against our server, and a raw client for frames no good client sends.
@Suite("WebSocket, live")
struct WebSocketLiveTests {
    enum Event: Sendable, Equatable {
        case open
        case text(String)
        case binary([UInt8])
        case pong([UInt8])
        case close(UInt16)
    }

    static func collecting(_ inbox: Inbox<Event>) -> WebSocketCallbacks {
        var cb = WebSocketCallbacks()
        cb.onOpen = { _ in inbox.push(.open) }
        cb.onText = { _, t in inbox.push(.text(t)) }
        cb.onBinary = { _, b in inbox.push(.binary(b)) }
        cb.onPong = { _, p in inbox.push(.pong(p)) }
        cb.onClose = { _, code, _ in inbox.push(.close(code)) }
        return cb
    }

    static func isClose(_ e: Event) -> Bool { if case .close = e { return true } else { return false } }

    @Test("our client's text and binary messages come back from the echo route, in order")
    func echo() async throws {
        let s = try LiveServer()
        let inbox = Inbox<Event>()
        let ws = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(s.port)/ws", group: s.group, callbacks: Self.collecting(inbox))
        _ = try await inbox.first { $0 == .open }
        ws.send(text: "héllo")
        ws.send(binary: [0, 1, 2, 255])
        let big = [UInt8]((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        ws.send(binary: big)
        _ = try await inbox.first { $0 == .binary(big) }
        let messages = inbox.all.filter { $0 != .open }
        #expect(messages == [.text("héllo"), .binary([0, 1, 2, 255]), .binary(big)])
        ws.close()
        await s.stop()
    }

    @Test("a ping is answered with a pong carrying the same payload")
    func ping() async throws {
        let s = try LiveServer()
        let inbox = Inbox<Event>()
        let ws = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(s.port)/ws", group: s.group, callbacks: Self.collecting(inbox))
        ws.ping([9, 8, 7])
        _ = try await inbox.first { $0 == .pong([9, 8, 7]) }
        ws.close()
        await s.stop()
    }

    @Test("a client close is echoed with the same code and both sides see it")
    func clientClose() async throws {
        let s = try LiveServer()
        let inbox = Inbox<Event>()
        let ws = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(s.port)/ws", group: s.group, callbacks: Self.collecting(inbox))
        ws.close(code: 4000, reason: "bye")
        #expect(try await inbox.first(where: Self.isClose) == .close(4000))
        #expect(await eventually { s.state.serverCloses.withLock { $0 } == [4000] })
        #expect(await eventually { s.server.connectionCount == 0 })
        await s.stop()
    }

    @Test("a server close reaches the client with its code")
    func serverClose() async throws {
        let s = try LiveServer()
        let inbox = Inbox<Event>()
        let ws = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(s.port)/ws", group: s.group, callbacks: Self.collecting(inbox))
        ws.send(text: "close:4001")
        #expect(try await inbox.first(where: Self.isClose) == .close(4001))
        await s.stop()
    }

    @Test("a raw client's fragmented message with a ping in between is reassembled; the pong comes first")
    func fragments() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try await c.upgrade(path: "/ws")
        try c.sendFrame(WebSocketFrame(fin: false, opcode: .text, payload: Array("frag".utf8)))
        try c.sendFrame(.ping([1]))
        try c.sendFrame(WebSocketFrame(fin: true, opcode: .continuation, payload: Array("ment".utf8)))
        let pong = try await c.readFrame()
        #expect(pong?.opcode == .pong && pong?.payload == [1])
        #expect(pong?.masked == false)
        let text = try await c.readFrame()
        #expect(text?.opcode == .text && text?.payload == Array("fragment".utf8))
        await s.stop()
    }

    struct BadFrame: CustomTestStringConvertible, Sendable {
        var name: String
        var path: String
        var bytes: [UInt8]
        var code: UInt16
        var testDescription: String { name }
    }

    static let badFrames: [BadFrame] = [
        BadFrame(name: "invalid UTF-8 in a text frame", path: "/ws",
                 bytes: WebSocketFrame(fin: true, opcode: .text, payload: [0x68, 0xC3, 0x28]).serialized(maskingKey: 0xA1B2_C3D4), code: 1007),
        BadFrame(name: "an unmasked client frame", path: "/ws",
                 bytes: WebSocketFrame.text("hi").serialized(maskingKey: nil), code: 1002),
        BadFrame(name: "a message over the route's limit", path: "/ws-small",
                 bytes: WebSocketFrame.binary([UInt8](repeating: 1, count: 2000)).serialized(maskingKey: 7), code: 1009),
        BadFrame(name: "fragments that add up past the route's limit", path: "/ws-small",
                 bytes: WebSocketFrame(fin: false, opcode: .binary, payload: [UInt8](repeating: 1, count: 800)).serialized(maskingKey: 7)
                    + WebSocketFrame(fin: true, opcode: .continuation, payload: [UInt8](repeating: 1, count: 800)).serialized(maskingKey: 7),
                 code: 1009),
        BadFrame(name: "a reserved opcode", path: "/ws", bytes: [0x83, 0x80, 1, 2, 3, 4], code: 1002),
        BadFrame(name: "a close frame with a code that must not be sent", path: "/ws",
                 bytes: WebSocketFrame(fin: true, opcode: .close, payload: [0x03, 0xED]).serialized(maskingKey: 5), code: 1002),
        BadFrame(name: "a continuation with nothing to continue", path: "/ws",
                 bytes: WebSocketFrame(fin: true, opcode: .continuation, payload: [1]).serialized(maskingKey: 5), code: 1002),
    ]

    @Test("a bad frame gets a close frame with the right code, then the connection closes", arguments: badFrames)
    func badFrame(_ b: BadFrame) async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try await c.upgrade(path: b.path)
        try c.send(b.bytes)
        let frame = try await c.readFrame()
        #expect(frame?.opcode == .close)
        #expect(closeCode(of: frame) == b.code)
        #expect(await c.isClosedByPeer())
        await s.stop()
    }

    @Test("an upgrade without a key is 400 and one with the wrong version is 426 with the version we speak")
    func badHandshake() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        try c.send("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n")
        #expect(try await c.readResponse().status == 400)
        let d = try RawConnection(port: s.port)
        try d.send("GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n")
        let r = try await d.readResponse()
        #expect(r.status == 426)
        #expect(r.header("sec-websocket-version") == "13")
        await s.stop()
    }

    @Test("frames sent right behind the upgrade request are not lost")
    func framesWithUpgrade() async throws {
        let s = try LiveServer()
        let c = try RawConnection(port: s.port)
        let upgrade = "GET /ws HTTP/1.1\r\nHost: t\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        try c.send(Array(upgrade.utf8) + WebSocketFrame.text("early").serialized(maskingKey: 99))
        let r = try await c.readResponse()
        #expect(r.status == 101)
        #expect(r.header("sec-websocket-accept") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        c.adoptLeftover()
        let f = try await c.readFrame()
        #expect(f?.payload == Array("early".utf8))
        await s.stop()
    }

    @Test("a peer that stops reading is disconnected once its send queue passes the limit")
    func slowConsumer() async throws {
        var config = HTTPServerConfiguration()
        config.webSocketMaxQueued = 512 << 10
        let s = try LiveServer(configuration: config)
        let c = try RawConnection(port: s.port, receiveBuffer: 4096)
        try await c.upgrade(path: "/ws-flood")
        // The client never reads again.
        #expect(await eventually(within: .seconds(30)) { s.state.serverCloses.withLock { $0 } == [1008] })
        #expect(await eventually { s.server.connectionCount == 0 })
        #expect(s.metrics.counter("switchboard_websocket_slow_consumers_total") == 1)
        await s.stop()
    }
}
