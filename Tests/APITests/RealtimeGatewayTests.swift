import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import Testing
import Wire
@testable import API

/// The realtime gateway in-process: the conversation routes and `/v1/realtime` on one HTTP server on
/// 127.0.0.1 port 0, clients on our own WebSocket client. What a client sees: login answers, events in
/// commit order, resume replaying exactly what was missed.
@Suite("Realtime gateway, in-process")
struct RealtimeGatewayTests {
    /// A server with the conversation routes and the gateway wired as `SwitchboardServer` wires them.
    final class Rig: Sendable {
        let platform: TestPlatform
        let group: EventLoopGroup
        let work: WorkPool
        let gateway: RealtimeGateway
        let server: HTTPServer
        let port: UInt16

        /// `pingInterval`: when set, the gateway's ticker runs (pings at that interval, token expiry checked).
        init(replayCapacity: Int = 1000, pingInterval: Duration? = nil) throws {
            platform = try TestPlatform()
            group = EventLoopGroup(threads: 2, name: "rt-test")
            work = WorkPool(threads: 4, name: "rt-work")
            let authenticator = Authenticator(core: platform.core)
            var settings = RealtimeGateway.Settings()
            settings.replayCapacity = replayCapacity
            if let pingInterval { settings.pingInterval = pingInterval }
            gateway = RealtimeGateway(core: platform.core, authenticator: authenticator, settings: settings, work: work,
                                      deliveryLoop: group.loops[0])
            platform.core.conversations.bus.add(gateway)
            var router = Router()
            ConversationRoutes(core: platform.core, capacity: 100).register(on: &router)
            UserRoutes(core: platform.core).register(on: &router)
            gateway.register(on: &router)
            let app = HTTPApplication(router: router, middleware: [AuthMiddleware(authenticator: authenticator)])
            server = HTTPServer(group: group, responder: app, metrics: Metrics(), work: work)
            port = try server.listen(SocketAddress(host: "127.0.0.1", port: 0)).port
            if pingInterval != nil { gateway.start() }
        }

        func stop() async {
            gateway.stop()
            await server.shutdown(gracePeriod: .milliseconds(100))
            group.shutdown()
            work.shutdown()
        }
    }

    /// A realtime client: every text message it receives, parsed, in arrival order.
    final class Client: Sendable {
        /// What the socket's callbacks fill in.
        final class Received: Sendable {
            let messages = Mutex<[JSONValue]>([])
            let closeCode = Mutex<UInt16?>(nil)
        }

        let socket: WebSocket
        let received = Received()

        init(port: UInt16, group: EventLoopGroup) async throws {
            let received = self.received
            var callbacks = WebSocketCallbacks()
            callbacks.onText = { _, text in
                if let v = try? JSONParser.parse(text) { received.messages.withLock { $0.append(v) } }
            }
            callbacks.onClose = { _, code, _ in received.closeCode.withLock { $0 = code } }
            socket = try await WebSocketClient.connect(url: "ws://127.0.0.1:\(port)/v1/realtime", group: group, callbacks: callbacks)
        }

        func send(_ type: String, tid: String, _ body: JSONValue = [:]) {
            socket.send(text: Self.text(type, tid: tid, body))
        }

        static func text(_ type: String, tid: String, _ body: JSONValue = [:]) -> String {
            String(decoding: try! JSONEncoder().encode(JSONValue.object(["type": .string(type), "tid": .string(tid), "body": body])),
                   as: UTF8.self)
        }

        var closeCode: UInt16? { received.closeCode.withLock { $0 } }

        /// Waits until the server has closed the socket; returns the close code it sent.
        func closed(timeout: Duration = .seconds(20)) async throws -> UInt16 {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if let code = closeCode { return code }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw TestFailure("the socket was not closed; last messages: \(messages.suffix(3))")
        }

        var messages: [JSONValue] { received.messages.withLock { $0 } }
        var events: [JSONValue] { messages.filter { $0["conversation_id"] != nil } }

        /// Waits until `predicate` holds for the messages received so far.
        @discardableResult
        func wait(timeout: Duration = .seconds(20), _ what: String, until predicate: ([JSONValue]) -> Bool) async throws -> [JSONValue] {
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                let m = messages
                if predicate(m) { return m }
                try await Task.sleep(for: .milliseconds(10))
            }
            throw TestFailure("timed out waiting for \(what); got \(messages.count) messages: \(messages.suffix(3))")
        }

        func answer(rid: String) async throws -> JSONValue {
            let m = try await wait("the answer to \(rid)") { $0.contains { $0["rid"]?.stringValue == rid } }
            return m.first { $0["rid"]?.stringValue == rid }!
        }
    }

    /// An application, `count` users, a conversation they have all joined, and one logged-in client each.
    func room(_ rig: Rig, users count: Int) async throws -> (app: String, key: RSAPrivateKey, cid: String, members: [String], clients: [Client]) {
        let p = rig.platform
        let (app, key) = try await p.createApplication()
        let appToken = bearer(p.token(app: app, key: key))
        let conversation = await p.send(.POST, "/v1/conversations", auth: appToken, json: ["name": "gateway-room"])
        guard let cid = conversation.json["id"]?.stringValue else { throw TestFailure("create conversation: \(conversation.text)") }
        var members: [String] = []
        var clients: [Client] = []
        for i in 0..<count {
            let name = "user\(i)"
            let user = await p.send(.POST, "/v1/users", auth: appToken, json: ["name": .string(name)])
            guard let uid = user.json["id"]?.stringValue else { throw TestFailure("create user: \(user.text)") }
            let joined = await p.send(.POST, "/v1/conversations/\(cid)/members", auth: appToken,
                                      json: ["user": ["id": .string(uid)], "state": "joined", "channel": ["type": "app"]])
            guard let mid = joined.json["id"]?.stringValue else { throw TestFailure("join: \(joined.text)") }
            members.append(mid)
            let client = try await Client(port: rig.port, group: rig.group)
            client.send("session:login", tid: "login", ["token": .string(p.token(app: app, key: key, sub: name))])
            let answer = try await client.answer(rid: "login")
            guard answer["type"]?.stringValue == "session:success" else { throw TestFailure("login: \(answer)") }
            clients.append(client)
        }
        return (app, key, cid, members, clients)
    }

    @Test("login errors are answered with their code and the socket stays open for a retry")
    func loginErrors() async throws {
        let rig = try Rig()
        let p = rig.platform
        let (app, key) = try await p.createApplication()
        _ = await p.send(.POST, "/v1/users", auth: bearer(p.token(app: app, key: key)), json: ["name": "ada"])
        let c = try await Client(port: rig.port, group: rig.group)
        c.send("session:login", tid: "1", ["token": "not-a-jwt"])
        #expect(try await c.answer(rid: "1")["body"]?["code"]?.stringValue == "invalidToken")
        c.send("session:login", tid: "2", ["token": .string(p.token(app: app, key: key, sub: "ada", lifetime: 10, iatOffset: -200))])
        #expect(try await c.answer(rid: "2")["body"]?["code"]?.stringValue == "tokenExpired")
        c.send("session:login", tid: "3", ["token": .string(p.token(app: app, key: key, sub: "ada", acl: ["/*/users/**"]))])
        #expect(try await c.answer(rid: "3")["body"]?["code"]?.stringValue == "forbidden")
        c.send("session:refresh", tid: "4", ["token": .string(p.token(app: app, key: key, sub: "ada"))])
        #expect(try await c.answer(rid: "4")["body"]?["code"]?.stringValue == "notLoggedIn")
        c.send("session:login", tid: "5", ["token": .string(p.token(app: app, key: key, sub: "ada"))])
        let ok = try await c.answer(rid: "5")
        #expect(ok["type"]?.stringValue == "session:success")
        #expect(ok["body"]?["user"]?["name"]?.stringValue == "ada")
        await rig.stop()
    }

    @Test("events posted concurrently reach every member once each, all in the same order, the commit order")
    func fanOutOrder() async throws {
        let rig = try Rig()
        let r = try await room(rig, users: 3)
        let before = r.clients.map { $0.events.count }
        // Four posters at once: the only order is the store's, and every socket must see that one.
        let perPoster = 50
        await withTaskGroup(of: Void.self) { group in
            for poster in 0..<4 {
                group.addTask {
                    let token = bearer(rig.platform.token(app: r.app, key: r.key))
                    for i in 0..<perPoster {
                        _ = await rig.platform.send(.POST, "/v1/conversations/\(r.cid)/events", auth: token,
                                                    json: ["type": "text", "from": .string(r.members[poster % r.members.count]),
                                                           "body": ["text": .string("p\(poster)-\(i)")]])
                    }
                }
            }
        }
        var sequences: [[Int]] = []
        for (c, start) in zip(r.clients, before) {
            let all = try await c.wait("200 text events") { $0.filter { $0["type"]?.stringValue == "text" }.count >= 4 * perPoster }
            let ids = all.filter { $0["conversation_id"] != nil }.dropFirst(start).compactMap { $0["id"]?.intValue }
            sequences.append(ids)
        }
        let stored = await rig.platform.send(.GET, "/v1/conversations/\(r.cid)/events?page_size=100&order=asc",
                                             auth: bearer(rig.platform.token(app: r.app, key: r.key)))
        #expect(stored.status == 200)
        for ids in sequences {
            #expect(ids == ids.sorted(), "ids arrive in commit order")
            #expect(Set(ids).count == ids.count, "no event twice")
            #expect(ids == sequences[0], "every member sees the same sequence")
        }
        #expect(sequences[0].count == 4 * perPoster)
        await rig.stop()
    }

    @Test("a resumed session gets exactly the events it missed while away, then live ones")
    func resume() async throws {
        let rig = try Rig()
        let r = try await room(rig, users: 2)
        let token = bearer(rig.platform.token(app: r.app, key: r.key))
        let away = r.clients[1]
        let sessionID = try #require(away.messages.first { $0["rid"]?.stringValue == "login" }?["body"]?["session_id"]?.stringValue)
        func post(_ text: String) async {
            _ = await rig.platform.send(.POST, "/v1/conversations/\(r.cid)/events", auth: token,
                                        json: ["type": "text", "from": .string(r.members[0]), "body": ["text": .string(text)]])
        }
        await post("before")
        let seen = try await away.wait("the first text") { $0.contains { $0["body"]?["text"]?.stringValue == "before" } }
        let lastSeen = try #require(seen.last { $0["conversation_id"] != nil }?["id"]?.intValue)
        away.socket.close()
        try await Task.sleep(for: .milliseconds(100))
        for i in 0..<5 { await post("missed-\(i)") }
        let back = try await Client(port: rig.port, group: rig.group)
        back.send("session:resume", tid: "r", ["session_id": .string(sessionID), "last_event_ids": [r.cid: .number(Double(lastSeen))]])
        let answer = try await back.answer(rid: "r")
        #expect(answer["type"]?.stringValue == "session:success")
        #expect(answer["body"]?["replayed"]?.intValue == 5)
        await post("live")
        let texts = try await back.wait("five replayed and one live") { $0.filter { $0["type"]?.stringValue == "text" }.count >= 6 }
            .filter { $0["type"]?.stringValue == "text" }.compactMap { $0["body"]?["text"]?.stringValue }
        #expect(texts == (0..<5).map { "missed-\($0)" } + ["live"])
        await rig.stop()
    }

    @Test("a login token that expires during the session ends it with tokenExpired and close 4001")
    func tokenExpiresInSession() async throws {
        let rig = try Rig(pingInterval: .seconds(30))
        let p = rig.platform
        let (app, key) = try await p.createApplication()
        _ = await p.send(.POST, "/v1/users", auth: bearer(p.token(app: app, key: key)), json: ["name": "ada"])
        let c = try await Client(port: rig.port, group: rig.group)
        c.send("session:login", tid: "1", ["token": .string(p.token(app: app, key: key, sub: "ada", lifetime: 30))])
        #expect(try await c.answer(rid: "1")["type"]?.stringValue == "session:success")
        // Within the 60 s leeway after exp the session lives on.
        p.clock.advance(60)
        try await Task.sleep(for: .milliseconds(600))
        #expect(c.closeCode == nil)
        p.clock.advance(31)
        #expect(try await c.closed() == 4001)
        let pushed = c.messages.last { $0["type"]?.stringValue == "session:error" }
        #expect(pushed?["body"]?["code"]?.stringValue == "tokenExpired")
        #expect(pushed?["rid"] == nil, "a pushed error answers no request")
        await rig.stop()
    }

    @Test("a request before login is refused with notLoggedIn, and the socket can still log in")
    func requestBeforeLogin() async throws {
        let rig = try Rig()
        let p = rig.platform
        let (app, key) = try await p.createApplication()
        _ = await p.send(.POST, "/v1/users", auth: bearer(p.token(app: app, key: key)), json: ["name": "ada"])
        let c = try await Client(port: rig.port, group: rig.group)
        c.send("rtc:mute", tid: "early", ["conversation_id": "CON-x", "muted": true])
        let refused = try await c.answer(rid: "early")
        #expect(refused["type"]?.stringValue == "session:error")
        #expect(refused["body"]?["code"]?.stringValue == "notLoggedIn")
        c.send("unknown:thing", tid: "early2")
        #expect(try await c.answer(rid: "early2")["body"]?["code"]?.stringValue == "notLoggedIn")
        c.send("session:login", tid: "login", ["token": .string(p.token(app: app, key: key, sub: "ada"))])
        #expect(try await c.answer(rid: "login")["type"]?.stringValue == "session:success")
        // Logged in, an unknown type is answered as such, not as notLoggedIn.
        c.send("unknown:thing", tid: "late")
        #expect(try await c.answer(rid: "late")["body"]?["code"]?.stringValue == "unknownType")
        #expect(c.closeCode == nil)
        await rig.stop()
    }

    @Test("requests sent back to back without waiting are answered in the order they were sent")
    func pipelinedRequests() async throws {
        let rig = try Rig()
        let r = try await room(rig, users: 1)
        let c = r.clients[0]
        let token = rig.platform.token(app: r.app, key: r.key, sub: "user0")
        // Queued requests of three kinds that take different paths (a token check, an unknown type, a bad
        // token); all in one burst.
        let count = 300
        for i in 0..<count {
            switch i % 3 {
            case 0: c.send("session:refresh", tid: "t\(i)", ["token": .string(token)])
            case 1: c.send("nobody:handles", tid: "t\(i)")
            default: c.send("session:refresh", tid: "t\(i)", ["token": "bad"])
            }
        }
        let answers = try await c.wait("\(count) answers") { $0.filter { $0["rid"]?.stringValue?.hasPrefix("t") == true }.count >= count }
            .filter { $0["rid"]?.stringValue?.hasPrefix("t") == true }
        #expect(answers.compactMap { $0["rid"]?.stringValue } == (0..<count).map { "t\($0)" })
        let kinds = answers.prefix(3).map { $0["type"]?.stringValue ?? "" }
        #expect(kinds == ["session:refresh:success", "error", "session:refresh:error"])
        await rig.stop()
    }

    @Test("a message of 256 KiB is handled, one byte more closes the socket with 1009")
    func messageLimit() async throws {
        let rig = try Rig()
        let limit = RealtimeGateway.maxMessageSize
        #expect(limit == 256 * 1024)
        func padded(_ tid: String, to size: Int) -> String {
            let empty = Client.text("session:ping", tid: tid, ["pad": ""])
            return Client.text("session:ping", tid: tid, ["pad": .string(String(repeating: "x", count: size - empty.utf8.count))])
        }
        let c = try await Client(port: rig.port, group: rig.group)
        let exact = padded("exact", to: limit)
        #expect(exact.utf8.count == limit)
        c.socket.send(text: exact)
        #expect(try await c.answer(rid: "exact")["type"]?.stringValue == "session:pong")
        c.socket.send(text: padded("over", to: limit + 1))
        #expect(try await c.closed() == 1009)
        #expect(!c.messages.contains { $0["rid"]?.stringValue == "over" })
        await rig.stop()
    }

    @Test("session:ping is answered with session:pong; a client that answers pings stays through many intervals")
    func pingPong() async throws {
        let rig = try Rig(pingInterval: .milliseconds(1500))
        let r = try await room(rig, users: 2)
        let c = r.clients[0]
        c.send("session:ping", tid: "p")
        let pong = try await c.answer(rid: "p")
        #expect(pong["type"]?.stringValue == "session:pong")
        #expect(pong["body"] == .object([:]))
        // Two unanswered pings end a session (pingTimeout, 4002); our client answers every ping frame, so
        // three intervals later it is still connected and still receives events. (The interval leaves room
        // for a machine whose cores other tests hold for a while.)
        try await Task.sleep(for: .milliseconds(4500))
        #expect(c.closeCode == nil)
        #expect(rig.gateway.connectedSessionCount(userID: try #require(c.messages.first { $0["rid"]?.stringValue == "login" }?["body"]?["user"]?["id"]?.stringValue)) == 1)
        _ = await rig.platform.send(.POST, "/v1/conversations/\(r.cid)/events", auth: bearer(rig.platform.token(app: r.app, key: r.key)),
                                    json: ["type": "text", "from": .string(r.members[1]), "body": ["text": "still here"]])
        try await c.wait("the text") { $0.contains { $0["body"]?["text"]?.stringValue == "still here" } }
        await rig.stop()
    }

    @Test("a resume that reaches past the replay ring replays what it holds and names the conversation incomplete")
    func resumeIncomplete() async throws {
        let rig = try Rig(replayCapacity: 3)
        let r = try await room(rig, users: 2)
        let token = bearer(rig.platform.token(app: r.app, key: r.key))
        let away = r.clients[1]
        let sessionID = try #require(away.messages.first { $0["rid"]?.stringValue == "login" }?["body"]?["session_id"]?.stringValue)
        let lastSeen = away.events.last?["id"]?.intValue ?? 0
        away.socket.close()
        _ = try await away.closed()
        try await Task.sleep(for: .milliseconds(100))
        for i in 0..<5 {
            _ = await rig.platform.send(.POST, "/v1/conversations/\(r.cid)/events", auth: token,
                                        json: ["type": "text", "from": .string(r.members[0]), "body": ["text": .string("m\(i)")]])
        }
        let back = try await Client(port: rig.port, group: rig.group)
        back.send("session:resume", tid: "r", ["session_id": .string(sessionID), "last_event_ids": [r.cid: .number(Double(lastSeen))]])
        let answer = try await back.answer(rid: "r")
        #expect(answer["body"]?["replayed"]?.intValue == 3)
        #expect(answer["body"]?["incomplete"] == [.string(r.cid)])
        let texts = try await back.wait("three replayed") { $0.filter { $0["type"]?.stringValue == "text" }.count >= 3 }
            .filter { $0["type"]?.stringValue == "text" }.compactMap { $0["body"]?["text"]?.stringValue }
        #expect(texts == ["m2", "m3", "m4"])
        // An unknown session is refused; the client has to log in again.
        let stranger = try await Client(port: rig.port, group: rig.group)
        stranger.send("session:resume", tid: "x", ["session_id": "SES-unknown"])
        #expect(try await stranger.answer(rid: "x")["body"]?["code"]?.stringValue == "invalidSession")
        await rig.stop()
    }
}
