import AppServerSupport
import Foundation
import Runtime
import Synchronization
import Wire

enum VideoServer {
    static func main(_ argv: [String]) async -> Int32 {
        await AppServer.run("video") { group in
            let config = try Config(argv)
            let app = VideoApp(config: config, client: HTTPClient(group: group))
            return (config.listen, app.application(), "for application \(config.application.id) on \(config.switchboard)")
        }
    }
}

struct Config {
    var listen: SocketAddress
    var switchboard: String
    var application: ApplicationCredentials

    init(_ argv: [String]) throws {
        let options = try AppServerOptions(argv, known: ["--listen", "--switchboard", "--app-id", "--key-file"])
        listen = try options.listen(env: "VIDEO_LISTEN", default: SocketAddress(host: "127.0.0.1", port: 3002))
        switchboard = options.switchboard
        application = try options.application()
    }
}

final class VideoApp: Sendable {
    let api: SwitchboardAPI
    /// Room name → session id, made on a room's first use (kept while the app server runs).
    private let rooms = Mutex<[String: String]>([:])

    static let roles: Set = ["publisher", "subscriber", "moderator", "publisheronly"]
    /// A client token's lifetime: 1 s to 30 days, an hour unless asked.
    static let maxTokenLifetime = 30 * 24 * 3600

    init(config: Config, client: HTTPClient) {
        api = SwitchboardAPI(base: config.switchboard, application: config.application, client: client)
    }

    var applicationID: String { api.application.id }
    var project: String { "/v2/project/" + applicationID }

    func application() -> HTTPApplication {
        var router = Router()
        // The tutorial's route: the room's session (made on first use) and a publisher token for it.
        router.get("/room/:name") { [self] req in
            let name = req.parameter("name")
            guard (1...100).contains(name.count) else { throw APIError.badRequest("A room name is 1 to 100 characters.") }
            let sessionID = try await room(name)
            return .json(["applicationId": .string(applicationID), "sessionId": .string(sessionID),
                          "token": .string(try token(sessionID, role: "publisher", data: nil, ttl: 3600))] as JSONValue)
        }
        router.post("/session") { [self] req in
            let mode = try Self.body(req)["mediaMode"]?.stringValue ?? "routed"
            guard mode == "routed" || mode == "relayed" else { throw APIError.badRequest("mediaMode is routed or relayed.") }
            let sessionID = try await createSession(relayed: mode == "relayed")
            return .json(["sessionId": .string(sessionID), "applicationId": .string(applicationID), "mediaMode": .string(mode)] as JSONValue)
        }
        router.post("/token") { [self] req in
            let body = try Self.body(req)
            let sessionID = try Self.sessionID(body)
            let role = body["role"]?.stringValue ?? "publisher"
            guard Self.roles.contains(role) else { throw APIError.badRequest("role must be one of \(Self.roles.sorted().joined(separator: ", ")).") }
            let ttl = body["ttl"]?.doubleValue ?? 3600
            guard ttl >= 1, ttl <= Double(Self.maxTokenLifetime) else { throw APIError.badRequest("ttl is 1 s to 30 days.") }
            let data = body["data"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            guard (data?.utf8.count ?? 0) <= 1000 else { throw APIError.badRequest("data is at most 1000 bytes.") }
            try await requireSession(sessionID)
            let token = try token(sessionID, role: role, data: data, ttl: Int(ttl))
            return .json(["token": .string(token), "role": .string(role), "expiresAt": .number((Date().timeIntervalSince1970 + ttl).rounded(.down))] as JSONValue)
        }
        router.post("/broadcast") { [self] req in
            let sessionID = try Self.sessionID(try Self.body(req))
            let r = try await api.call(.POST, project + "/broadcast", body: ["sessionId": .string(sessionID), "maxDuration": 3600,
                                                                            "outputs": ["hls": ["lowLatency": true]]])
            return .json(["id": r["id"] ?? .null, "hls": r["broadcastUrls"]?["hls"] ?? .null] as JSONValue)
        }
        router.post("/broadcast/stop") { [self] req in
            _ = try await api.call(.POST, project + "/broadcast/\(try Self.id(req))/stop")
            return .noContent()
        }
        router.post("/captions") { [self] req in
            let sessionID = try Self.sessionID(try Self.body(req))
            let r = try await api.call(.POST, project + "/captions", body: [
                "sessionId": .string(sessionID), "token": .string(try token(sessionID, role: "moderator", data: nil, ttl: 60)),
                "languageCode": "en-US", "maxDuration": 3600, "partialCaptions": true,
            ])
            return .json(["captionsId": r["captionsId"] ?? .null] as JSONValue)
        }
        router.post("/captions/stop") { [self] req in
            _ = try await api.call(.POST, project + "/captions/\(try Self.id(req))/stop")
            return .noContent()
        }
        router.post("/render") { [self] req in
            let body = try Self.body(req)
            let sessionID = try Self.sessionID(body)
            guard let url = body["url"]?.stringValue, !url.isEmpty else { throw APIError.badRequest("url is required.") }
            let r = try await api.call(.POST, project + "/render", body: [
                "sessionId": .string(sessionID), "url": .string(url), "resolution": "640x480", "maxDuration": 3600,
                "token": .string(try token(sessionID, role: "publisher", data: "name=composer", ttl: 3600)),
                "properties": ["name": "composed page"],
            ])
            return .json(["id": r["id"] ?? .null] as JSONValue)
        }
        router.post("/render/stop") { [self] req in
            _ = try await api.call(.DELETE, project + "/render/\(try Self.id(req))")
            return .noContent()
        }
        return HTTPApplication(router: router, middleware: [CORSMiddleware()])
    }

    /// A client token for the session, signed with the application's key, as the Vonage server SDKs make them.
    func token(_ sessionID: String, role: String, data: String?, ttl: Int) throws -> String {
        var claims: [String: JSONValue] = ["scope": "session.connect", "sub": "video", "session_id": .string(sessionID),
                                           "role": .string(role), "initial_layout_class_list": []]
        if let data { claims["connection_data"] = .string(data) }
        return try api.application.token(ttl: ttl, claims)
    }

    func createSession(relayed: Bool) async throws -> String {
        let r = try await api.call(.POST, "/session/create", form: ["p2p.preference": relayed ? "enabled" : "disabled"])
        guard let id = r[0]?["session_id"]?.stringValue else { throw UpstreamError(detail: "Switchboard did not return a session id.") }
        return id
    }

    /// The room's session, made on its first use. Two first requests at once may both make one: the first kept wins.
    /// At most `maxRooms` rooms are kept (any caller may name a new one): one more is 503.
    func room(_ name: String) async throws -> String {
        if let id = rooms.withLock({ $0[name] }) { return id }
        guard rooms.withLock({ $0.count }) < Self.maxRooms else { throw APIError.unavailable("This app server keeps at most \(Self.maxRooms) rooms.") }
        let made = try await createSession(relayed: false)
        return rooms.withLock { rooms in
            if let id = rooms[name] { return id }
            rooms[name] = made
            return made
        }
    }

    static let maxRooms = 10_000

    /// 404 unless `sessionID` is a session of this application (a token for another would be refused on connect).
    func requireSession(_ sessionID: String) async throws {
        do {
            _ = try await api.call(.GET, project + "/session/\(SwitchboardAPI.queryEscaped(sessionID))/stream")
        } catch let e as UpstreamError where e.upstreamStatus == 404 || e.upstreamStatus == 400 {
            throw APIError.notFound("No such session for this application.")
        }
    }

    static func body(_ req: HTTPRequest) throws -> JSONValue {
        if req.body.isEmpty { return .object([:]) }
        let body = try req.decode(JSONValue.self)
        guard case .object = body else { throw APIError.badRequest("The body must be a JSON object.") }
        return body
    }

    static func sessionID(_ body: JSONValue) throws -> String {
        guard let id = body["sessionId"]?.stringValue, (1...200).contains(id.count) else { throw APIError.badRequest("sessionId is required.") }
        return id
    }

    /// The `id` of a stop request's body, as a path segment.
    static func id(_ req: HTTPRequest) throws -> String {
        guard let id = try body(req)["id"]?.stringValue, (1...200).contains(id.count) else { throw APIError.badRequest("id is required.") }
        return SwitchboardAPI.queryEscaped(id)
    }
}
