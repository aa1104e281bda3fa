import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import Testing
import Wire
@testable import API

/// A whole server in-process on a loopback port, with clients that speak HTTP and the `video:*` protocol.
final class LiveVideoServer: Sendable {
    let directory: String
    let server: SwitchboardServer
    let base: String
    let clients: EventLoopGroup
    let http: HTTPClient
    var account: Account { server.account.0 }

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("video-live-\(UUID4.generate())").path
        var configuration = ServerConfiguration()
        configuration.listen = SocketAddress(host: "127.0.0.1", port: 0)
        configuration.dataDirectory = directory
        configuration.threads = 1
        configuration.mediaPort = 0
        configuration.sipPort = 0
        configuration.shutdownGrace = .milliseconds(200)
        server = try SwitchboardServer(configuration: configuration)
        base = "127.0.0.1:\(try server.start().http.port)"
        clients = EventLoopGroup(threads: 1, name: "video-test-clients")
        http = HTTPClient(group: clients)
    }

    /// Runs `body` against a fresh server and stops the server afterwards, whatever happened.
    static func with(_ body: (LiveVideoServer) async throws -> Void) async throws {
        let live = try LiveVideoServer()
        do {
            try await body(live)
        } catch {
            await live.stop()
            throw error
        }
        await live.stop()
    }

    func stop() async {
        await server.shutdown()
        clients.shutdown()
        try? FileManager.default.removeItem(atPath: directory)
    }

    struct Reply {
        var status: Int
        var json: JSONValue
        var text: String
    }

    func send(_ method: HTTPMethod, _ path: String, headers: [(String, String)], json: JSONValue? = nil, form: String? = nil) async throws -> Reply {
        var h = HTTPHeaders(headers)
        var body: [UInt8] = []
        if let json {
            body = Array(try JSONEncoder().encode(json))
            h["Content-Type"] = "application/json"
        } else if let form {
            body = Array(form.utf8)
            h["Content-Type"] = "application/x-www-form-urlencoded"
        }
        let r = try await http.execute(HTTPClientRequest(method: method, url: "http://\(base)\(path)", headers: h, body: body), timeout: .seconds(60))
        return Reply(status: r.status, json: (try? JSONDecoder().decode(JSONValue.self, from: Data(r.body))) ?? .null, text: r.text)
    }

    // MARK: Credentials

    var basic: [(String, String)] { [("Authorization", "Basic " + Base64.encode("\(account.apiKey):\(account.apiSecret)"))] }

    /// The OpenTok server credential: an HS256 JWT signed with the account's api secret.
    var openTokAuth: [(String, String)] {
        let now = Date().timeIntervalSince1970.rounded(.down)
        let claims: [String: JSONValue] = ["iss": .string(account.apiKey), "ist": "project", "iat": .number(now), "exp": .number(now + 300),
                                           "jti": .string(UUID4.generate())]
        return [("X-OPENTOK-AUTH", try! JWT.sign(claims: claims, key: .hs256(Array(account.apiSecret.utf8))))]
    }

    struct Application {
        var id: String
        var key: RSAPrivateKey

        /// An application JWT for the REST APIs.
        var bearer: [(String, String)] {
            let now = Date().timeIntervalSince1970.rounded(.down)
            let claims: [String: JSONValue] = ["application_id": .string(id), "iat": .number(now), "exp": .number(now + 300),
                                               "jti": .string(UUID4.generate())]
            return [("Authorization", "Bearer " + (try! JWT.sign(claims: claims, key: .rs256(key))))]
        }

        /// A client token the way the Vonage SDKs make it.
        func clientToken(session: String, role: VideoGrant.Role = .publisher) -> String {
            let now = Date().timeIntervalSince1970.rounded(.down)
            let claims: [String: JSONValue] = ["application_id": .string(id), "iat": .number(now), "exp": .number(now + 600),
                                               "jti": .string(UUID4.generate()), "session_id": .string(session), "role": .string(role.rawValue),
                                               "scope": "session.connect", "sub": "video"]
            return try! JWT.sign(claims: claims, key: .rs256(key))
        }
    }

    func createApplication(_ name: String) async throws -> Application {
        let r = try await send(.POST, "/v2/applications", headers: basic, json: ["name": .string(name)])
        guard r.status == 201, let id = r.json["id"]?.stringValue, let pem = r.json["keys"]?["private_key"]?.stringValue else {
            throw TestFailure("create application: \(r.status) \(r.text)")
        }
        return Application(id: id, key: try RSAPrivateKey(pem: pem))
    }

    /// `POST /session/create` with these credentials; the new session id.
    func createSession(_ credentials: [(String, String)]) async throws -> String {
        let r = try await send(.POST, "/session/create", headers: credentials, form: "p2p.preference=disabled")
        guard r.status == 200, let id = r.json[0]?["session_id"]?.stringValue else { throw TestFailure("create session: \(r.status) \(r.text)") }
        return id
    }

    /// Client tokens signed with the account's api secret: OpenTok `T1==`, and OpenTok HS256 JWT below.
    func accountT1(session: String, role: VideoGrant.Role = .publisher) -> String {
        VideoTokenVerifier.makeT1(apiKey: account.apiKey, apiSecret: account.apiSecret, sessionID: session, role: role, data: nil, ttl: 600)
    }

    func accountJWT(session: String, role: VideoGrant.Role = .publisher) -> String {
        let now = Date().timeIntervalSince1970.rounded(.down)
        let claims: [String: JSONValue] = ["iss": .string(account.apiKey), "ist": "project", "iat": .number(now), "exp": .number(now + 600),
                                           "jti": .string(UUID4.generate()), "session_id": .string(session), "role": .string(role.rawValue),
                                           "scope": "session.connect"]
        return try! JWT.sign(claims: claims, key: .hs256(Array(account.apiSecret.utf8)))
    }

    /// A well-formed session id of `project` that was never created.
    static func ghostSession(of project: String) -> String {
        "1_" + Base64URL.encode("1~\(project)~~1800000000000~\(SecureRandom.hex(12))~P~~")
    }

    func openClient() async throws -> VideoTestClient {
        let inbox = VideoTestClient.Inbox()
        var callbacks = WebSocketCallbacks()
        callbacks.onText = { _, text in
            if let msg = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) { inbox.messages.withLock { $0.append(msg) } }
        }
        let socket = try await WebSocketClient.connect(url: "ws://\(base)/v1/realtime", group: clients, callbacks: callbacks)
        return VideoTestClient(socket: socket, inbox: inbox)
    }
}

/// A signaling-only client of the `video:*` protocol.
final class VideoTestClient: Sendable {
    final class Inbox: Sendable {
        let messages = Mutex<[JSONValue]>([])
    }

    let socket: WebSocket
    let inbox: Inbox
    let nextID = Atomic<Int>(0)

    init(socket: WebSocket, inbox: Inbox) {
        self.socket = socket
        self.inbox = inbox
    }

    enum Answer: Equatable {
        case success(JSONValue)
        case error(code: String, detail: String)
    }

    /// Sends a request and waits for its answer.
    func request(_ type: String, _ body: JSONValue) async throws -> Answer {
        let rid = String(nextID.wrappingAdd(1, ordering: .relaxed).newValue)
        let message: JSONValue = ["type": .string(type), "cid": .string(rid), "body": body]
        socket.send(text: String(decoding: try JSONEncoder().encode(message), as: UTF8.self))
        let answer = try await wait { $0["rid"]?.stringValue == rid }
        let kind = answer["type"]?.stringValue ?? ""
        let b = answer["body"] ?? .null
        if kind.hasSuffix(":error") { return .error(code: b["code"]?.stringValue ?? "", detail: b["detail"]?.stringValue ?? "") }
        return .success(b)
    }

    /// `video:connect`: the join, or the refusal.
    func connect(_ session: String, token: String) async throws -> Answer {
        try await request("video:connect", ["sessionId": .string(session), "token": .string(token)])
    }

    /// The first message that matches, removed from the inbox; throws after `timeout`.
    func wait(timeout: Duration = .seconds(5), _ matches: (JSONValue) -> Bool) async throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let found = inbox.messages.withLock { box -> JSONValue? in
                guard let i = box.firstIndex(where: matches) else { return nil }
                return box.remove(at: i)
            }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw TestFailure("no matching message; inbox: \(inbox.messages.withLock { $0.compactMap { $0["type"]?.stringValue } })")
    }

    /// The pushes of `type` that arrived (within `settle`), removed from the inbox.
    func pushes(_ type: String, settle: Duration = .milliseconds(300)) async throws -> [JSONValue] {
        try await Task.sleep(for: settle)
        return inbox.messages.withLock { box in
            let hits = box.filter { $0["type"]?.stringValue == type && $0["rid"] == nil }
            box.removeAll { $0["type"]?.stringValue == type && $0["rid"] == nil }
            return hits
        }
    }

    func close() { socket.close() }
}

@Suite("Video sessions belong to one project")
struct VideoIsolationTests {
    /// Every route under `/v2/project/{pid}/session/{sid}`: method, path after the session, JSON body.
    static func sessionRoutes(connection: String, stream: String) -> [(HTTPMethod, String, JSONValue?)] {
        [
            (.POST, "/signal", ["type": "chat", "data": "from another project"]),
            (.POST, "/connection/\(connection)/signal", ["type": "chat", "data": "from another project"]),
            (.GET, "/stream", nil),
            (.GET, "/stream/\(stream)", nil),
            (.PUT, "/stream", ["items": [["id": .string(stream), "layoutClassList": ["full"]]]]),
            (.POST, "/stream/\(stream)/mute", nil),
            (.POST, "/mute", ["active": true, "excludedStreamIds": []]),
            (.DELETE, "/connection/\(connection)", nil),
        ]
    }

    @Test("another application, and the account key, get the same 404 as for a missing session on every session route")
    func otherProjectsGet404() async throws {
        try await LiveVideoServer.with { live in
            let a = try await live.createApplication("a")
            let b = try await live.createApplication("b")
            let session = try await live.createSession(b.bearer)

            let bob = try await live.openClient()
            guard case .success(let joined) = try await bob.connect(session, token: b.clientToken(session: session)),
                  let connection = joined["connectionId"]?.stringValue else { throw TestFailure("bob could not join") }
            guard case .success(let published) = try await bob.request("video:publish", ["name": "bob cam"]),
                  let stream = published["streamId"]?.stringValue else { throw TestFailure("bob could not publish") }

            // (credentials, the project they act as)
            let outsiders: [(String, [(String, String)], String)] = [
                ("application A", a.bearer, a.id),
                ("account key (X-OPENTOK-AUTH)", live.openTokAuth, live.account.apiKey),
                ("account Basic", live.basic, live.account.apiKey),
            ]
            for (who, credentials, project) in outsiders {
                let ghost = LiveVideoServer.ghostSession(of: project)
                for (method, tail, body) in Self.sessionRoutes(connection: connection, stream: stream) {
                    let r = try await live.send(method, "/v2/project/\(project)/session/\(session)\(tail)", headers: credentials, json: body)
                    let missing = try await live.send(method, "/v2/project/\(project)/session/\(ghost)\(tail)", headers: credentials, json: body)
                    #expect(r.status == 404, "\(who): \(method) …\(tail) → \(r.status) \(r.text)")
                    #expect(missing.status == 404)
                    // The documented JSON error shape, and nothing that tells the session exists.
                    for field in ["type", "title", "detail", "code"] {
                        #expect(r.json[field] != nil && r.json[field] == missing.json[field], "\(who): \(method) …\(tail) \(field)")
                    }
                }
                // Naming the owner's project instead is refused before the session is looked at.
                let named = try await live.send(.GET, "/v2/project/\(b.id)/session/\(session)/stream", headers: credentials)
                #expect(named.status == 403, "\(who) naming B's project: \(named.status)")
            }

            // Nothing reached bob, and the session is as it was.
            #expect(try await bob.pushes("video:signal").isEmpty)
            #expect(try await bob.pushes("video:muteForced", settle: .zero).isEmpty)
            #expect(try await bob.pushes("video:streamPropertyChanged", settle: .zero).isEmpty)
            #expect(try await bob.pushes("video:sessionDisconnected", settle: .zero).isEmpty)
            let own = try await live.send(.GET, "/v2/project/\(b.id)/session/\(session)/stream", headers: b.bearer)
            #expect(own.status == 200 && own.json["count"] == 1)

            // The owner may do all of it.
            for (method, tail, body) in Self.sessionRoutes(connection: connection, stream: stream) {
                let r = try await live.send(method, "/v2/project/\(b.id)/session/\(session)\(tail)", headers: b.bearer, json: body)
                #expect((200..<300).contains(r.status), "B: \(method) …\(tail) → \(r.status) \(r.text)")
            }
            #expect(try await bob.pushes("video:sessionDisconnected").count == 1)
            bob.close()
        }
    }

    @Test("an Audio Connector for another project's session is refused as for a missing one, before any socket is opened")
    func audioConnectorStaysInItsProject() async throws {
        try await LiveVideoServer.with { live in
            let a = try await live.createApplication("a")
            let b = try await live.createApplication("b")
            let session = try await live.createSession(b.bearer)
            let ghost = LiveVideoServer.ghostSession(of: a.id)
            // Port 9 has no listener: a request that got as far as dialling would fail with `websocket-failed`.
            func body(_ session: String, _ token: String) -> JSONValue {
                ["sessionId": .string(session), "token": .string(token), "websocket": ["uri": "ws://127.0.0.1:9/"]]
            }
            let foreign = try await live.send(.POST, "/v2/project/\(a.id)/connect", headers: a.bearer,
                                              json: body(session, b.clientToken(session: session)))
            let missing = try await live.send(.POST, "/v2/project/\(a.id)/connect", headers: a.bearer,
                                              json: body(ghost, a.clientToken(session: ghost)))
            #expect(foreign.status == 400 && missing.status == 400, "\(foreign.text) \(missing.text)")
            #expect(foreign.json["code"] == "bad-request" && foreign.json["detail"] == missing.json["detail"])
            // The owner's credentials with a token another project signed.
            let token = try await live.send(.POST, "/v2/project/\(b.id)/connect", headers: b.bearer,
                                            json: body(session, a.clientToken(session: session)))
            #expect(token.status == 400 && token.json["code"] == "invalid-token", "\(token.text)")
            // Naming the owner's project with other credentials.
            let named = try await live.send(.POST, "/v2/project/\(b.id)/connect", headers: a.bearer,
                                            json: body(session, b.clientToken(session: session)))
            #expect(named.status == 403)
        }
    }

    @Test("a SIP call into another project's session is refused as into a missing one, before any call is placed")
    func sipDialStaysInItsProject() async throws {
        try await LiveVideoServer.with { live in
            let a = try await live.createApplication("a")
            let b = try await live.createApplication("b")
            let session = try await live.createSession(b.bearer)
            let ghost = LiveVideoServer.ghostSession(of: a.id)
            func body(_ session: String, _ token: String) -> JSONValue {
                ["sessionId": .string(session), "token": .string(token), "sip": ["uri": "sip:desk@127.0.0.1:9"]]
            }
            let foreign = try await live.send(.POST, "/v2/project/\(a.id)/dial", headers: a.bearer, json: body(session, b.clientToken(session: session)))
            let missing = try await live.send(.POST, "/v2/project/\(a.id)/dial", headers: a.bearer, json: body(ghost, a.clientToken(session: ghost)))
            #expect(foreign.status == 404 && missing.status == 404, "\(foreign.text) \(missing.text)")
            #expect(foreign.json["detail"] == missing.json["detail"])
            let token = try await live.send(.POST, "/v2/project/\(b.id)/dial", headers: b.bearer, json: body(session, a.clientToken(session: session)))
            #expect(token.status == 400 && token.json["code"] == "invalid-token", "\(token.text)")
            let named = try await live.send(.POST, "/v2/project/\(b.id)/dial", headers: a.bearer, json: body(session, b.clientToken(session: session)))
            #expect(named.status == 403)
            // The owner's request gets past every check to the SIP edge, which this server does not run.
            let owner = try await live.send(.POST, "/v2/project/\(b.id)/dial", headers: b.bearer, json: body(session, b.clientToken(session: session)))
            #expect(owner.status == 503, "\(owner.text)")
            let dtmf = try await live.send(.POST, "/v2/project/\(a.id)/session/\(session)/play-dtmf", headers: a.bearer, json: ["digits": "1"])
            #expect(dtmf.status == 404)
        }
    }

    @Test("the account key's sessions are out of an application's reach")
    func applicationCannotReachAccountSessions() async throws {
        try await LiveVideoServer.with { live in
            let a = try await live.createApplication("a")
            let session = try await live.createSession(live.openTokAuth)
            let peer = try await live.openClient()
            guard case .success(let joined) = try await peer.connect(session, token: live.accountT1(session: session)),
                  let connection = joined["connectionId"]?.stringValue else { throw TestFailure("could not join") }
            for (method, tail, body) in Self.sessionRoutes(connection: connection, stream: "none") {
                let r = try await live.send(method, "/v2/project/\(a.id)/session/\(session)\(tail)", headers: a.bearer, json: body)
                #expect(r.status == 404, "A: \(method) …\(tail) → \(r.status) \(r.text)")
                #expect(r.json["detail"]?.stringValue == "The session does not exist.")
            }
            #expect(try await peer.pushes("video:signal").isEmpty)
            #expect(try await peer.pushes("video:sessionDisconnected", settle: .zero).isEmpty)
            let own = try await live.send(.POST, "/v2/project/\(live.account.apiKey)/session/\(session)/signal", headers: live.openTokAuth,
                                          json: ["type": "chat", "data": "hi"])
            #expect(own.status == 204)
            peer.close()
        }
    }

    @Test("a client token signed by another project is refused at connect, like a token for a missing session")
    func foreignTokensRefusedAtConnect() async throws {
        try await LiveVideoServer.with { live in
            let a = try await live.createApplication("a")
            let b = try await live.createApplication("b")
            let bSession = try await live.createSession(b.bearer)
            let accountSession = try await live.createSession(live.openTokAuth)

            let bob = try await live.openClient()
            guard case .success = try await bob.connect(bSession, token: b.clientToken(session: bSession, role: .moderator)) else {
                throw TestFailure("the owner's token was refused")
            }
            let refused: [(String, String, String)] = [
                ("A's moderator token for B's session", bSession, a.clientToken(session: bSession, role: .moderator)),
                ("the account's T1 token for B's session", bSession, live.accountT1(session: bSession, role: .moderator)),
                ("the account's JWT for B's session", bSession, live.accountJWT(session: bSession, role: .moderator)),
                ("B's token for the account's session", accountSession, b.clientToken(session: accountSession)),
                ("A's token for the account's session", accountSession, a.clientToken(session: accountSession)),
            ]
            let ghost = LiveVideoServer.ghostSession(of: a.id)
            let probe = try await live.openClient()
            let missing = try await probe.connect(ghost, token: a.clientToken(session: ghost))
            probe.close()
            #expect(missing == .error(code: "sessionNotFound", detail: "No such session."))
            for (what, session, token) in refused {
                let client = try await live.openClient()
                #expect(try await client.connect(session, token: token) == missing, "\(what)")
                // Refused means not joined: nothing else works on that socket.
                #expect(try await client.request("video:signal", ["data": "x"]) == .error(code: "notConnected", detail: "Send video:connect first."))
                client.close()
            }
            #expect(try await bob.pushes("video:connectionCreated").isEmpty)

            // Each project's own tokens still join.
            let viewer = try await live.openClient()
            guard case .success = try await viewer.connect(accountSession, token: live.accountJWT(session: accountSession)) else {
                throw TestFailure("the account's token for its own session was refused")
            }
            viewer.close()
            bob.close()
        }
    }
}
