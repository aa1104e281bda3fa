import AppServerSupport
import Foundation
import Runtime
import Store
import Wire

enum DropIn {
    static func main(_ argv: [String]) async -> Int32 {
        await AppServer.run("dropin") { group in
            let config = try Config(argv)
            let app = try DropInApp(config: config)
            return (config.listen, app.application(group: group), "for application \(config.application.id) on \(config.switchboard)")
        }
    }
}

struct Config {
    var listen: SocketAddress
    var switchboard: String
    var application: ApplicationCredentials
    var database: String
    var roomTTL = 600

    init(_ argv: [String]) throws {
        let options = try AppServerOptions(argv, known: ["--listen", "--switchboard", "--app-id", "--key-file", "--data"])
        listen = try options.listen(env: "DROPIN_LISTEN", default: SocketAddress(host: "127.0.0.1", port: 3000))
        switchboard = options.switchboard
        database = options["--data", env: "DROPIN_DATA"] ?? "dropin.db"
        application = try options.application()
    }
}

final class DropInApp: Sendable {
    let config: Config
    let db: Database

    init(config: Config) throws {
        self.config = config
        db = try Database(path: config.database)
        _ = try db.migrate([Migration(version: 1, name: "users", sql: "CREATE TABLE users (name TEXT PRIMARY KEY, user_id TEXT NOT NULL)")])
    }

    func application(group: EventLoopGroup) -> HTTPApplication {
        let api = SwitchboardAPI(base: config.switchboard, application: config.application, client: HTTPClient(group: group))
        var router = Router()
        router.post("/auth") { [self] req in
            guard case .object(let o) = try req.decode(JSONValue.self), let name = o["name"]?.stringValue?.trimmingCharacters(in: .whitespaces),
                  !name.isEmpty, name.count <= 100 else {
                throw APIError.badRequest("name is required.")
            }
            try await ensureUser(name, api: api)
            return .json(["name": name, "jwt": try config.application.userToken(name)])
        }
        router.get("/rooms") { _ in
            let r = try await api.call(.GET, "/v1/conversations?page_size=100&order=desc")
            let list = r["_embedded"]?["conversations"]?.arrayValue ?? []
            return .json(JSONValue.array(list.map { c in
                ["id": c["id"] ?? .null, "display_name": c["display_name"].flatMap { $0.isNull ? nil : $0 } ?? c["name"] ?? .null]
            }))
        }
        router.post("/rooms") { [self] req in
            guard case .object(let o) = try req.decode(JSONValue.self), let display = o["display_name"]?.stringValue, !display.isEmpty else {
                throw APIError.badRequest("display_name is required.")
            }
            let r = try await api.call(.POST, "/v1/conversations",
                                       body: ["display_name": .string(display), "properties": ["ttl": .number(Double(config.roomTTL))]])
            return .json(["id": r["id"] ?? .null], status: 201)
        }
        return HTTPApplication(router: router, middleware: [CORSMiddleware()])
    }

    /// Creates the Switchboard user the first time a name logs in; remembers it locally.
    func ensureUser(_ name: String, api: SwitchboardAPI) async throws {
        if try db.queryOne("SELECT user_id FROM users WHERE name = ?", [.text(name)]) != nil { return }
        var userID: String?
        do {
            userID = try await api.call(.POST, "/v1/users", body: ["name": .string(name), "display_name": .string(name)])["id"]?.stringValue
        } catch let e as UpstreamError where e.upstreamStatus == 409 {
            // Created earlier by another app server instance: look it up.
            let r = try await api.call(.GET, "/v1/users?name=" + SwitchboardAPI.queryEscaped(name))
            userID = r["_embedded"]?["users"]?[0]?["id"]?.stringValue
        }
        guard let userID else { throw UpstreamError(detail: "Switchboard did not return a user id.") }
        try db.execute("INSERT OR IGNORE INTO users (name, user_id) VALUES (?, ?)", [.text(name), .text(userID)])
    }
}
