import Crypto
import Foundation
import Runtime
import Synchronization
import Wire

enum VoiceServer {
    static func main(_ argv: [String]) async -> Int32 {
        do {
            let config = try Config(argv)
            let group = EventLoopGroup(threads: 1, name: "voice")
            let app = VoiceApp(config: config, client: HTTPClient(group: group))
            let server = HTTPServer(group: group, responder: app.application())
            let address = try server.listen(config.listen)
            app.say("switchboard-voice serving http://\(address)/ for application \(config.appID) on \(config.switchboard)")
            while true { try await Task.sleep(for: .seconds(3600)) }
        } catch {
            FileHandle.standardError.write(Data("switchboard-voice: \(error)\n".utf8))
            return 1
        }
    }
}

struct Config {
    var listen = SocketAddress(host: "127.0.0.1", port: 3001)
    var switchboard = "http://127.0.0.1:8080"
    var appID: String
    var privateKey: RSAPrivateKey
    /// The caller id of calls to phones; looked up (the first number linked to the application) when not given.
    var fromNumber: String?
    var apiKey: String?
    var apiSecret: String?
    /// The app user a phone calling the application's number is connected to.
    var inboundUser: String?

    init(_ argv: [String]) throws {
        var opts: [String: String] = [:]
        var i = 0
        while i < argv.count {
            guard argv[i].hasPrefix("--"), i + 1 < argv.count else { throw ConfigError("unexpected argument \(argv[i])") }
            opts[argv[i]] = argv[i + 1]
            i += 2
        }
        let known: Set = ["--listen", "--switchboard", "--app-id", "--key-file", "--from-number", "--api-key", "--api-secret", "--inbound-user"]
        if let unknown = opts.keys.first(where: { !known.contains($0) }) { throw ConfigError("unknown option \(unknown)") }
        let env = ProcessInfo.processInfo.environment
        if let l = opts["--listen"] ?? env["VOICE_LISTEN"] {
            guard let a = SocketAddress(parsing: l) else { throw ConfigError("--listen: expected HOST:PORT") }
            listen = a
        }
        switchboard = (opts["--switchboard"] ?? env["SWITCHBOARD_URL"] ?? switchboard).trimmingCharacters(in: ["/"])
        fromNumber = opts["--from-number"] ?? env["VOICE_FROM_NUMBER"]
        if let n = fromNumber, VoiceApp.phoneNumber(n) == nil { throw ConfigError("--from-number: expected a phone number (digits, optional +)") }
        apiKey = opts["--api-key"] ?? env["SWITCHBOARD_API_KEY"]
        apiSecret = opts["--api-secret"] ?? env["SWITCHBOARD_API_SECRET"]
        inboundUser = opts["--inbound-user"] ?? env["VOICE_INBOUND_USER"]
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

final class VoiceApp: Sendable {
    let config: Config
    let client: HTTPClient
    /// The application's linked number, once looked up.
    private let linkedNumber = Mutex<String?>(nil)
    private let output = Mutex(FileHandle.standardOutput)

    init(config: Config, client: HTTPClient) {
        self.config = config
        self.client = client
    }

    /// One line on stdout, written at once (events are read by tools and tests as they come).
    func say(_ line: String) {
        output.withLock { $0.write(Data((line + "\n").utf8)) }
    }

    /// A phone number as the tutorial's client sends it: an optional `+` and 3 to 20 digits.
    static func phoneNumber(_ s: String) -> String? {
        let digits = s.hasPrefix("+") ? s.dropFirst() : Substring(s)
        guard (3...20).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return String(digits)
    }

    func application() -> HTTPApplication {
        var router = Router()
        // The answer URL: the caller id, then the callee the client asked for (`to`).
        router.get("/voice/answer") { [self] req in
            guard let to = req.query["to"]?.trimmingCharacters(in: .whitespaces), !to.isEmpty, to.count <= 200 else {
                throw APIError.badRequest("to is required (1 to 200 characters).")
            }
            let endpoint: JSONValue
            var connect: [String: JSONValue] = ["action": "connect"]
            if to.lowercased().hasPrefix("sip:") || to.lowercased().hasPrefix("sips:") {
                // A SIP address: the server calls it directly.
                endpoint = ["type": "sip", "uri": .string(to)]
                if let from = try await callerID() { connect["from"] = .string(from) }
            } else if let number = Self.phoneNumber(to), let own = try await callerID(), number == own {
                // A phone called the application's number.
                return inboundNCCO()
            } else if let number = Self.phoneNumber(to) {
                endpoint = ["type": "phone", "number": .string(number)]
                if let from = try await callerID() { connect["from"] = .string(from) }
            } else {
                endpoint = ["type": "app", "user": .string(to)]
            }
            connect["endpoint"] = [endpoint]
            return .json([["action": "talk", "text": "Please wait while we connect you."], .object(connect)] as JSONValue)
        }
        // A phone calls the application's number: ring the app user.
        router.get("/voice/answer-inbound") { [self] _ in inboundNCCO() }
        let event: HTTPHandler = { [self] req in
            var line: JSONValue
            if req.method == .POST, let body = try? req.decode(JSONValue.self) {
                line = body
            } else {
                line = .object(req.query.mapValues(JSONValue.string))
            }
            say(String(decoding: (try? JSONEncoder.sorted.encode(line)) ?? Data("{}".utf8), as: UTF8.self))
            return .noContent()
        }
        router.get("/voice/event", event)
        router.post("/voice/event", event)
        router.post("/auth") { [self] req in
            guard case .object(let o) = try req.decode(JSONValue.self), let name = o["name"]?.stringValue?.trimmingCharacters(in: .whitespaces),
                  !name.isEmpty, name.count <= 100 else {
                throw APIError.badRequest("name is required.")
            }
            let userID = try await ensureUser(name)
            return .json(["name": .string(name), "jwt": .string(try userToken(name)), "user_id": .string(userID)] as JSONValue)
        }
        return HTTPApplication(router: router, middleware: [CORSMiddleware()])
    }

    /// A phone calls in: it is connected to the app user `--inbound-user` (the phone-to-app tutorial's NCCO,
    /// a lone `connect`: the phone rings until the user answers, and hears 603 when the user rejects).
    func inboundNCCO() -> HTTPResponse {
        guard let user = config.inboundUser else {
            return .json([["action": "talk", "text": "Nobody takes calls here yet. Goodbye."]] as JSONValue)
        }
        return .json([["action": "connect", "endpoint": [["type": "app", "user": .string(user)]]]] as JSONValue)
    }

    /// `--from-number`, else the first number linked to the application (needs the account's key and secret).
    func callerID() async throws -> String? {
        if let n = config.fromNumber { return Self.phoneNumber(n) }
        if let n = linkedNumber.withLock({ $0 }) { return n }
        guard let key = config.apiKey, let secret = config.apiSecret else { return nil }
        let q = "api_key=\(key.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? key)"
            + "&api_secret=\(secret.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? secret)&application_id=\(config.appID)"
        let r = try await call(.GET, "/account/numbers?" + q, authorized: false)
        let number = r["numbers"]?[0]?["msisdn"]?.stringValue
        linkedNumber.withLock { $0 = number }
        return number
    }

    /// The Switchboard user of this name (created through the Users API on first use); its id.
    func ensureUser(_ name: String) async throws -> String {
        let query = "/v1/users?name=" + (name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name)
        if let id = try await call(.GET, query)["_embedded"]?["users"]?[0]?["id"]?.stringValue { return id }
        do {
            if let id = try await call(.POST, "/v1/users", body: ["name": .string(name), "display_name": .string(name)])["id"]?.stringValue {
                return id
            }
        } catch let e as UpstreamError where e.detail.contains("409") {
            // Created meanwhile by a concurrent login.
        }
        guard let id = try await call(.GET, query)["_embedded"]?["users"]?[0]?["id"]?.stringValue else {
            throw UpstreamError(detail: "Switchboard did not return a user id.")
        }
        return id
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

    func call(_ method: HTTPMethod, _ path: String, body: JSONValue? = nil, authorized: Bool = true) async throws -> JSONValue {
        let response: HTTPClientResponse
        do {
            let headers: HTTPHeaders = authorized ? ["Authorization": "Bearer " + (try appToken())] : HTTPHeaders()
            response = try await client.send(method, config.switchboard + path, headers: headers, json: body)
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

extension JSONEncoder {
    /// Keys sorted, so event lines read the same every time.
    static var sorted: JSONEncoder {
        let e = JSONEncoder()
        e.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return e
    }
}
