import AppServerSupport
import Foundation
import Runtime
import Synchronization
import Wire

enum VoiceServer {
    static func main(_ argv: [String]) async -> Int32 {
        await AppServer.run("voice") { group in
            let config = try Config(argv)
            let app = VoiceApp(config: config, client: HTTPClient(group: group))
            return (config.listen, app.application(), "for application \(config.application.id) on \(config.switchboard)")
        }
    }
}

struct Config {
    var listen: SocketAddress
    var switchboard: String
    var application: ApplicationCredentials
    /// The caller id of calls to phones; looked up (the first number linked to the application) when not given.
    var fromNumber: String?
    var apiKey: String?
    var apiSecret: String?
    /// The app user a phone calling the application's number is connected to.
    var inboundUser: String?

    init(_ argv: [String]) throws {
        let options = try AppServerOptions(argv, known: ["--listen", "--switchboard", "--app-id", "--key-file", "--from-number", "--api-key",
                                                         "--api-secret", "--inbound-user"])
        listen = try options.listen(env: "VOICE_LISTEN", default: SocketAddress(host: "127.0.0.1", port: 3001))
        switchboard = options.switchboard
        fromNumber = options["--from-number", env: "VOICE_FROM_NUMBER"]
        if let n = fromNumber, VoiceApp.phoneNumber(n) == nil { throw ConfigError("--from-number: expected a phone number (digits, optional +)") }
        apiKey = options["--api-key", env: "SWITCHBOARD_API_KEY"]
        apiSecret = options["--api-secret", env: "SWITCHBOARD_API_SECRET"]
        inboundUser = options["--inbound-user", env: "VOICE_INBOUND_USER"]
        application = try options.application()
    }
}

final class VoiceApp: Sendable {
    let config: Config
    let api: SwitchboardAPI
    /// The application's linked number, once looked up.
    private let linkedNumber = Mutex<String?>(nil)
    private let output = Mutex(FileHandle.standardOutput)

    init(config: Config, client: HTTPClient) {
        self.config = config
        api = SwitchboardAPI(base: config.switchboard, application: config.application, client: client)
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
            return .json(["name": .string(name), "jwt": .string(try config.application.userToken(name)), "user_id": .string(userID)] as JSONValue)
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
        let q = "api_key=\(SwitchboardAPI.queryEscaped(key))&api_secret=\(SwitchboardAPI.queryEscaped(secret))&application_id=\(config.application.id)"
        let r = try await api.call(.GET, "/account/numbers?" + q, authorized: false)
        let number = r["numbers"]?[0]?["msisdn"]?.stringValue
        linkedNumber.withLock { $0 = number }
        return number
    }

    /// The Switchboard user of this name (created through the Users API on first use); its id.
    func ensureUser(_ name: String) async throws -> String {
        let query = "/v1/users?name=" + SwitchboardAPI.queryEscaped(name)
        if let id = try await api.call(.GET, query)["_embedded"]?["users"]?[0]?["id"]?.stringValue { return id }
        do {
            if let id = try await api.call(.POST, "/v1/users", body: ["name": .string(name), "display_name": .string(name)])["id"]?.stringValue {
                return id
            }
        } catch let e as UpstreamError where e.upstreamStatus == 409 {
            // Created meanwhile by a concurrent login.
        }
        guard let id = try await api.call(.GET, query)["_embedded"]?["users"]?[0]?["id"]?.stringValue else {
            throw UpstreamError(detail: "Switchboard did not return a user id.")
        }
        return id
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
