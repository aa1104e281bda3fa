import Crypto
import Foundation
import Runtime
import Store
import Wire

enum DropIn {
    static func main(_ argv: [String]) async -> Int32 {
        do {
            let config = try Config(argv)
            let app = try DropInApp(config: config)
            let group = EventLoopGroup(threads: 1, name: "dropin")
            let server = HTTPServer(group: group, responder: app.application(group: group))
            let address = try server.listen(config.listen)
            print("switchboard-dropin serving http://\(address)/ for application \(config.appID) on \(config.switchboard)")
            while true { try await Task.sleep(for: .seconds(3600)) }
        } catch {
            FileHandle.standardError.write(Data("switchboard-dropin: \(error)\n".utf8))
            return 1
        }
    }
}

struct Config {
    var listen = SocketAddress(host: "127.0.0.1", port: 3000)
    var switchboard = "http://127.0.0.1:8080"
    var appID: String
    var privateKey: RSAPrivateKey
    var database = "dropin.db"
    var roomTTL = 600

    init(_ argv: [String]) throws {
        var opts: [String: String] = [:]
        var i = 0
        while i < argv.count {
            guard argv[i].hasPrefix("--"), i + 1 < argv.count else { throw ConfigError("unexpected argument \(argv[i])") }
            opts[argv[i]] = argv[i + 1]
            i += 2
        }
        let env = ProcessInfo.processInfo.environment
        if let l = opts["--listen"] ?? env["DROPIN_LISTEN"] {
            guard let a = SocketAddress(parsing: l) else { throw ConfigError("--listen: expected HOST:PORT") }
            listen = a
        }
        switchboard = opts["--switchboard"] ?? env["SWITCHBOARD_URL"] ?? switchboard
        database = opts["--data"] ?? env["DROPIN_DATA"] ?? database
        // Same files `switchboard apps create` writes: switchboard_app.json and NAME.key.
        var appID = opts["--app-id"] ?? env["SWITCHBOARD_APP_ID"]
        var keyPEM = (opts["--key-file"] ?? env["SWITCHBOARD_KEY_FILE"]).flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }
        if appID == nil || keyPEM == nil, let data = FileManager.default.contents(atPath: "switchboard_app.json"),
           let obj = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            appID = appID ?? obj["id"] as? String
            keyPEM = keyPEM ?? obj["private_key"] as? String
        }
        guard let appID, let keyPEM else { throw ConfigError("--app-id and --key-file are required (or switchboard_app.json in the current directory)") }
        self.appID = appID
        privateKey = try RSAPrivateKey(pem: keyPEM)
    }
}

struct ConfigError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Switchboard answered with an error or could not be reached: the app answers 502 with the reason.
struct UpstreamError: HTTPErrorConvertible {
    var detail: String
    var status: Int { 502 }
    var title: String { "Bad Gateway" }
    var code: String { "upstream-error" }
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
        let client = HTTPClient(group: group)
        var router = Router()
        router.post("/auth") { [self] req in
            guard case .object(let o) = try req.decode(JSONValue.self), let name = o["name"]?.stringValue?.trimmingCharacters(in: .whitespaces),
                  !name.isEmpty, name.count <= 100 else {
                throw APIError.badRequest("name is required.")
            }
            try await ensureUser(name, client: client)
            return .json(["name": name, "jwt": try userToken(name)])
        }
        router.get("/rooms") { [self] _ in
            let r = try await call(client, .GET, "/v1/conversations?page_size=100&order=desc")
            let list = r["_embedded"]?["conversations"]?.arrayValue ?? []
            return .json(JSONValue.array(list.map { c in
                ["id": c["id"] ?? .null, "display_name": c["display_name"].flatMap { $0.isNull ? nil : $0 } ?? c["name"] ?? .null]
            }))
        }
        router.post("/rooms") { [self] req in
            guard case .object(let o) = try req.decode(JSONValue.self), let display = o["display_name"]?.stringValue, !display.isEmpty else {
                throw APIError.badRequest("display_name is required.")
            }
            let r = try await call(client, .POST, "/v1/conversations",
                                   body: ["display_name": .string(display), "properties": ["ttl": .number(Double(config.roomTTL))]])
            return .json(["id": r["id"] ?? .null], status: 201)
        }
        return HTTPApplication(router: router, middleware: [CORSMiddleware()])
    }

    /// Creates the Switchboard user the first time a name logs in; remembers it locally.
    func ensureUser(_ name: String, client: HTTPClient) async throws {
        if try db.queryOne("SELECT user_id FROM users WHERE name = ?", [.text(name)]) != nil { return }
        var userID: String?
        do {
            userID = try await call(client, .POST, "/v1/users", body: ["name": .string(name), "display_name": .string(name)])["id"]?.stringValue
        } catch let e as UpstreamError where e.detail.contains("409") {
            // Created earlier by another app server instance: look it up.
            let r = try await call(client, .GET, "/v1/users?name=" + (name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name))
            userID = r["_embedded"]?["users"]?[0]?["id"]?.stringValue
        }
        guard let userID else { throw UpstreamError(detail: "Switchboard did not return a user id.") }
        try db.execute("INSERT OR IGNORE INTO users (name, user_id) VALUES (?, ?)", [.text(name), .text(userID)])
    }

    func appToken(ttl: Int = 300) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        return try JWT.sign(claims: ["application_id": .string(config.appID), "iat": .number(Double(now)),
                                     "exp": .number(Double(now + ttl)), "jti": .string(UUID4.generate())],
                            key: .rs256(config.privateKey))
    }

    /// A client token: `sub` is the user name, `acl` the standard client paths, valid 6 hours.
    func userToken(_ name: String) throws -> String {
        let now = Int(Date().timeIntervalSince1970)
        let paths = ["/*/users/**", "/*/conversations/**", "/*/sessions/**", "/*/devices/**", "/*/image/**", "/*/media/**",
                     "/*/applications/**", "/*/push/**", "/*/knocking/**", "/*/legs/**", "/*/rtc/**"]
        return try JWT.sign(claims: [
            "application_id": .string(config.appID), "sub": .string(name), "iat": .number(Double(now)),
            "exp": .number(Double(now + 6 * 3600)), "jti": .string(UUID4.generate()),
            "acl": ["paths": .object(Dictionary(uniqueKeysWithValues: paths.map { ($0, JSONValue.object([:])) }))],
        ], key: .rs256(config.privateKey))
    }

    func call(_ client: HTTPClient, _ method: HTTPMethod, _ path: String, body: JSONValue? = nil) async throws -> JSONValue {
        let response: HTTPClientResponse
        do {
            response = try await client.send(method, config.switchboard + path, headers: ["Authorization": "Bearer " + (try appToken())], json: body)
        } catch {
            throw UpstreamError(detail: "Switchboard is unreachable: \(error)")
        }
        guard (200..<300).contains(response.status) else {
            let detail = (try? response.decode(JSONValue.self))?["detail"]?.stringValue ?? response.text
            throw UpstreamError(detail: "Switchboard answered \(response.status): \(detail)")
        }
        if response.body.isEmpty { return .null }
        guard let v = try? response.decode(JSONValue.self) else { throw UpstreamError(detail: "Switchboard answered with invalid JSON.") }
        return v
    }
}
