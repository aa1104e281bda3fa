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

        init(replayCapacity: Int = 1000) throws {
            platform = try TestPlatform()
            group = EventLoopGroup(threads: 2, name: "rt-test")
            work = WorkPool(threads: 4, name: "rt-work")
            let authenticator = Authenticator(core: platform.core)
            var settings = RealtimeGateway.Settings()
            settings.replayCapacity = replayCapacity
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
        }

        func stop() async {
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
            socket.send(text: String(decoding: try! JSONEncoder().encode(JSONValue.object(["type": .string(type), "tid": .string(tid), "body": body])),
                                     as: UTF8.self))
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
}
