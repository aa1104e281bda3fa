import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import SwitchboardClient
import Wire

/// `switchboard load`'s signaling through what a deployment runs: an application, one user per
/// member with its own JWT, a realtime session per member (the SDK's `Session`), a conversation per
/// room joined and negotiated with `rtc:*`; with video, a video session per room, a token per
/// connection and `video:*`. Media stays on the load generator's light peers.
final class AuthenticatedLoad: Sendable {
    let server: URL
    let client: ServerClient
    let app: AppCredentials
    let prefix: String
    let account: (key: String, secret: String)
    let video: Bool
    /// An application token for the REST calls (creating users), signed once.
    let appToken: String
    /// The conversation (audio) or video session of each room.
    let rooms: [String]
    private let sessions = Mutex<[Session]>([])
    private let videoSessions = Mutex<[SwitchboardClient.VideoSession]>([])
    /// Each room's published video streams, in publishing order, with the connection that published each.
    private let streams = Mutex<[Int: [(stream: String, connection: Int)]]>([:])
    /// Each publisher's video connection, by room and index (a leg subscribes on it).
    private let publisherConnections = Mutex<[Int: [Int: SwitchboardClient.VideoSession]]>([:])
    private let userIndex = Atomic<Int>(0)
    private let joinedMembers = Atomic<Int>(0)

    private init(server: URL, client: ServerClient, app: AppCredentials, prefix: String, account: (key: String, secret: String),
                 video: Bool, rooms: [String]) {
        self.server = server
        self.client = client
        self.app = app
        self.prefix = prefix
        self.account = account
        self.video = video
        self.rooms = rooms
        appToken = (try? app.token(ttl: 3600).0) ?? ""
    }

    /// Members whose `rtc:join` (or `video:connect`) succeeded.
    var joined: Int { joinedMembers.load(ordering: .relaxed) }

    /// The application (given with `--app-id`/`--key-file`, else created with the account's
    /// credentials) and one conversation or video session per room.
    static func prepare(_ args: Arguments, base: String, prefix: String, rooms: Int, video: Bool) async throws -> AuthenticatedLoad {
        let env = CLIEnvironment(args)
        let client = try ServerClient(baseURL: base, caFile: env.caFile)
        let account = try env.accountCredentials()
        let app: AppCredentials
        if args["--app-id"] != nil || args["--key-file"] != nil {
            app = try AppCredentials.resolve(args)
        } else {
            let made = try await client.call(.POST, "/v2/applications", body: .json(.object([
                "name": .string("load " + prefix), "capabilities": .object(["video": .object([:])]),
            ])), credentials: .basic(key: account.key, secret: account.secret))
            guard let id = made["id"]?.stringValue, let pem = made["keys"]?["private_key"]?.stringValue else {
                throw CLIError("the server's new application has no id or private key")
            }
            do { app = AppCredentials(id: id, key: try RSAPrivateKey(pem: pem)) } catch { throw CLIError("the new application's key: \(error)") }
        }
        guard let url = URL(string: base) else { throw CLIError("--server: not a URL: \(base)") }
        var ids: [String] = []
        for room in 0..<rooms {
            if video {
                ids.append(try await createVideoSession(client: client, app: app))
            } else {
                let made = try await client.call(.POST, "/v1/conversations", body: .json(.object([
                    "name": .string("\(prefix)-\(room)"), "display_name": .string("load room \(room)"),
                ])), credentials: .bearer(try app.token(ttl: 300).0))
                guard let id = made["id"]?.stringValue else { throw CLIError("the new conversation has no id") }
                ids.append(id)
            }
        }
        return AuthenticatedLoad(server: url, client: client, app: app, prefix: prefix, account: account, video: video, rooms: ids)
    }

    static func createVideoSession(client: ServerClient, app: AppCredentials) async throws -> String {
        let created = try await client.call(.POST, "/session/create", body: .form([("p2p.preference", "disabled")]),
                                            credentials: .bearer(try app.token(ttl: 300).0))
        guard let id = (created.arrayValue?.first ?? created)["session_id"]?.stringValue else {
            throw CLIError("the new video session has no session_id")
        }
        return id
    }

    /// A new user of the application and a realtime session logged in as it.
    private func login() async throws -> Session {
        let name = "\(prefix)-\(userIndex.wrappingAdd(1, ordering: .relaxed).oldValue)"
        _ = try await client.call(.POST, "/v1/users", body: .json(.object(["name": .string(name)])), credentials: .bearer(appToken))
        let (token, _) = try app.token(subject: name, acl: try JWTCommand.parseACL("client"), ttl: 24 * 3600)
        var options = Session.Options()
        options.reconnect = false
        options.requestTimeout = .seconds(30)
        let session: Session
        do { session = try await Session.connect(to: server, token: token, options: options) } catch {
            throw CLIError("session:login as \(name): \(error)")
        }
        sessions.withLock { $0.append(session) }
        return session
    }

    private func videoConnect(room: Int, role: VideoGrant.Role) async throws -> SwitchboardClient.VideoSession {
        let now = Int(Date().timeIntervalSince1970)
        let claims: [String: JSONValue] = [
            "application_id": .string(app.id), "iat": .number(Double(now)), "exp": .number(Double(now + 24 * 3600)),
            "jti": .string(UUID4.generate()), "session_id": .string(rooms[room]), "role": .string(role.rawValue),
            "scope": "session.connect", "sub": "video", "connection_data": .string("name=\(prefix)-\(userIndex.wrappingAdd(1, ordering: .relaxed).oldValue)"),
            "acl": ["paths": ["/session/**": .object([:])]],
        ]
        let token = try JWT.sign(claims: claims, key: .rs256(app.key))
        let session: SwitchboardClient.VideoSession
        do { session = try await SwitchboardClient.VideoSession.connect(to: server, sessionID: rooms[room], token: token) } catch {
            throw CLIError("video:connect: \(error)")
        }
        videoSessions.withLock { $0.append(session) }
        joinedMembers.add(1, ordering: .relaxed)
        return session
    }

    /// A publishing member of `room`: logs in, joins and publishes `offer`; returns the server's answer.
    func publish(room: Int, index: Int, offer: String) async throws -> String {
        if video {
            let connection = try await videoConnect(room: room, role: .publisher)
            let published: (stream: VideoStream, answer: String)
            do { published = try await connection.publish(name: "\(prefix)-\(room)-\(index)", offer: offer) } catch {
                throw CLIError("video:publish: \(error)")
            }
            streams.withLock { $0[room, default: []].append((published.stream.id, index)) }
            publisherConnections.withLock { $0[room, default: [:]][index] = connection }
            return published.answer
        }
        let session = try await login()
        let cid = JSONValue.string(rooms[room])
        do {
            try await session.request("rtc:join", ["conversation_id": cid])
            joinedMembers.add(1, ordering: .relaxed)
            let reply = try await session.request("rtc:publish", ["conversation_id": cid, "offer": .string(offer)])
            guard let answer = reply["answer"]?.stringValue else { throw CLIError("rtc:publish gave no answer") }
            return answer
        } catch let error as SessionError {
            throw CLIError("rtc:join/publish: \(error)")
        }
    }

    /// A listening member of `room`: logs in, joins and subscribes, answering each offer with
    /// `answer` (one offer for a conversation; one per published stream in a video session).
    /// A leg (`publisher` given) subscribes on that publisher's own connection to everyone else's streams.
    func subscribe(room: Int, publisher: Int? = nil, answer: @escaping @Sendable (String) async throws -> String) async throws {
        if video {
            let connection: SwitchboardClient.VideoSession
            if let publisher, let own = publisherConnections.withLock({ $0[room]?[publisher] }) {
                connection = own
            } else {
                connection = try await videoConnect(room: room, role: .subscriber)
            }
            for (stream, owner) in streams.withLock({ $0[room] ?? [] }) where owner != publisher {
                do { try await connection.subscribe(stream, answer: answer) } catch { throw CLIError("video:subscribe: \(error)") }
            }
            return
        }
        let session = try await login()
        let cid = JSONValue.string(rooms[room])
        do {
            try await session.request("rtc:join", ["conversation_id": cid])
            joinedMembers.add(1, ordering: .relaxed)
            let reply = try await session.request("rtc:subscribe", ["conversation_id": cid])
            // A room of more than SWITCHBOARD_ROOM_MIX_ABOVE (50) members mixes unless the server runs with
            // SWITCHBOARD_ROOM_MODE=sfu; its switch renegotiates every listener, which these peers do not follow.
            guard let offer = reply["offer"]?.stringValue else {
                throw CLIError("rtc:subscribe gave no offer: nobody publishes, or the room switched to mixing (a server "
                               + "with SWITCHBOARD_ROOM_MODE=auto mixes rooms of more than 50 members; run it with SWITCHBOARD_ROOM_MODE=sfu)")
            }
            let text = try await answer(offer)
            try await session.request("rtc:answer", ["conversation_id": cid, "answer": .string(text)])
        } catch let error as SessionError {
            throw CLIError("rtc:join/subscribe: \(error)")
        }
    }

    /// The members the server lists as joined in each conversation (REST, application token).
    func serverJoinedMembers() async -> Int? {
        guard !video else { return nil }
        var total = 0
        for cid in rooms {
            var cursor: String?
            repeat {
                var query = [("page_size", "100")]
                if let cursor { query.append(("cursor", cursor)) }
                guard let page = try? await client.call(.GET, "/v1/conversations/\(cid)/members", query: query, credentials: .bearer(appToken)) else {
                    return nil
                }
                total += (page["_embedded"]?["members"]?.arrayValue ?? []).filter { $0["state"]?.stringValue == "JOINED" }.count
                cursor = page["_links"]?["next"]?["href"]?.stringValue.flatMap { URLComponents(string: $0)?.queryItems?.first { $0.name == "cursor" }?.value }
            } while cursor != nil
        }
        return total
    }

    /// Logs every session out and leaves every video session, all at once.
    func close() async {
        let sessions = sessions.withLock { $0 }
        let videoSessions = videoSessions.withLock { $0 }
        await withTaskGroup(of: Void.self) { group in
            for s in sessions { group.addTask { await s.logout() } }
            for v in videoSessions { group.addTask { await v.disconnect() } }
        }
    }
}
