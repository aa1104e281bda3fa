import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import Wire

/// The voice app server built in, so `switchboard serve --dev` alone runs the dialer at `/phone/`:
/// the same routes as `switchboard-voice`, under `/phone/api/`.
///
/// - `POST /phone/api/auth {name}` → `{name, jwt, user_id}` (creates the user on first use)
/// - `GET|POST /phone/api/answer` → the NCCO: a `talk`, then a `connect` to the phone number or app
///   user the client dialled (`to`); a call from a phone to the application's number rings the
///   user who logged in last
/// - `POST /phone/api/event` → 204; the event is logged
/// - `GET /phone/api/config` → `{test_number}`: the built-in test phone number, or null
///
/// Everything lives in one application named `phone-demo` of the primary account, created on first
/// use, whose voice answer and event URLs point back at these routes on the server's own listener;
/// its private key is kept in `<data>/phone-demo.json` (mode 0600) so tokens stay valid across
/// restarts. Anyone who can reach the server can log in by name: development mode only.
final class PhoneDemoApp: Sendable {
    static let applicationName = "phone-demo"
    /// Caller id of calls to phone numbers while no number is linked to the application.
    static let defaultCallerID = "15550199"
    let core: PlatformCore
    let apiKey: String
    let file: String
    let testNumber: String?
    let logger = Logger(label: "phone-demo")
    private let demo: DemoApplication
    /// Where the server listens (`http://host:port`), known once it is bound.
    private let base = Mutex<String?>(nil)
    /// The base the application's webhooks were last pointed at.
    private let hooked = Mutex<String?>(nil)
    /// Who a call from a phone to the application's number rings: the user who logged in last.
    private let lastUser = Mutex<String?>(nil)

    init(core: PlatformCore, apiKey: String, dataDirectory: String, testNumber: String?) {
        self.core = core
        self.apiKey = apiKey
        self.testNumber = testNumber
        file = dataDirectory + "/phone-demo.json"
        demo = DemoApplication(core: core, apiKey: apiKey, name: Self.applicationName, file: file)
    }

    /// The HTTP listener is bound: the application's answer and event URLs point at it.
    func listening(on address: SocketAddress) {
        base.withLock { $0 = "http://\(address.locallyReachable)" }
        // An application from an earlier run may point at another port; a page with a saved token
        // places calls without logging in through /phone/api/auth first.
        if demo.saved {
            Task { [self] in _ = try? application() }
        }
    }

    /// The demo application and its signing key, created (or recovered from the file) once; its voice
    /// webhooks are (re)pointed at this server whenever the listening address changed.
    func application() throws -> (applicationID: String, key: RSAPrivateKey) {
        let resolved = try demo.get()
        if let base = base.withLock({ $0 }), hooked.withLock({ $0 }) != base {
            _ = try core.applications.update(id: resolved.applicationID, apiKey: apiKey, input: ApplicationInput(capabilities: [
                "voice": ["webhooks": [
                    "answer_url": ["address": .string(base + "/phone/api/answer"), "http_method": "GET"],
                    "event_url": ["address": .string(base + "/phone/api/event"), "http_method": "POST"],
                ]],
            ]))
            hooked.withLock { $0 = base }
        }
        return resolved
    }

    /// The number calls to phones come from: one linked to the application, else the default.
    func callerID(applicationID: String) -> String {
        ((try? core.numbers.list(apiKey: apiKey, applicationID: applicationID)) ?? []).first?.msisdn ?? Self.defaultCallerID
    }

    /// A phone number as the dialler accepts it: an optional `+` and 3 to 20 digits.
    static func phoneNumber(_ s: String) -> String? {
        let digits = s.hasPrefix("+") ? s.dropFirst() : Substring(s)
        guard (3...20).contains(digits.count), digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return String(digits)
    }

    /// The tutorial's NCCO for a call to `to` (a number, a SIP address or an app user name).
    func ncco(to: String, applicationID: String) -> JSONValue {
        let linked = Set(((try? core.numbers.list(apiKey: apiKey, applicationID: applicationID)) ?? []).map(\.msisdn))
        let endpoint: JSONValue
        if to.lowercased().hasPrefix("sip:") || to.lowercased().hasPrefix("sips:") {
            endpoint = ["type": "sip", "uri": .string(to)]
        } else if let number = Self.phoneNumber(to), !linked.contains(number) {
            endpoint = ["type": "phone", "number": .string(number)]
        } else if Self.phoneNumber(to) != nil {
            // A phone called the application's number: ring the user who logged in last. Connect only (the
            // phone-to-app tutorial's NCCO): the phone rings until the user answers, and a reject reaches it as 603.
            guard let user = lastUser.withLock({ $0 }) else {
                return [["action": "talk", "text": "Nobody is logged in to the phone demo. Goodbye."]]
            }
            return [["action": "connect", "endpoint": [["type": "app", "user": .string(user)]]]]
        } else {
            // Another user of the application: the callee sees the caller's user name.
            return [["action": "talk", "text": "Please wait while we connect you."],
                    ["action": "connect", "endpoint": [["type": "app", "user": .string(to)]]]]
        }
        return [["action": "talk", "text": "Please wait while we connect you."],
                ["action": "connect", "from": .string(callerID(applicationID: applicationID)), "endpoint": [endpoint]]]
    }

    func register(on router: inout Router) {
        router.post("/phone/api/auth", bodyLimit: 4096) { [self] req in
            guard let name = try req.json()["name"]?.stringValue?.trimmingCharacters(in: .whitespaces), !name.isEmpty, name.count <= 100 else {
                throw APIError.badRequest("name is required (1 to 100 characters).", code: "missing-name")
            }
            let (appID, key) = try application()
            var user = try core.users.find(name: name, applicationID: appID)
            if user == nil {
                do {
                    user = try core.users.create(applicationID: appID, input: UserInput(name: name, displayName: .some(name)))
                } catch {
                    user = try core.users.find(name: name, applicationID: appID)  // created by a concurrent login
                }
            }
            guard let user else { throw APIError.internalError("The user could not be created.") }
            lastUser.withLock { $0 = name }
            let now = Int(Date().timeIntervalSince1970)
            let jwt = try JWT.sign(claims: [
                "application_id": .string(appID), "sub": .string(name), "iat": .number(Double(now)),
                "exp": .number(Double(now + 6 * 3600)), "jti": .string(UUID().uuidString.lowercased()),
                "acl": ["paths": .object(Dictionary(uniqueKeysWithValues: ACL.clientPaths.map { ($0, JSONValue.object([:])) }))],
            ], key: .rs256(key))
            return .json(["name": .string(name), "jwt": .string(jwt), "user_id": .string(user.id)] as JSONValue)
        }
        let answer: HTTPHandler = { [self] req in
            // GET carries the parameters in the query, POST as a JSON object.
            var to = req.query["to"]
            if req.method == .POST, let body = try? req.json() { to = body["to"]?.stringValue ?? to }
            guard let to = to?.trimmingCharacters(in: .whitespaces), !to.isEmpty, to.count <= 200 else {
                throw APIError.badRequest("to is required (1 to 200 characters).", code: "missing-to")
            }
            let (appID, _) = try application()
            return .json(ncco(to: to, applicationID: appID))
        }
        router.get("/phone/api/answer", answer)
        router.post("/phone/api/answer", bodyLimit: 16384, answer)
        router.post("/phone/api/event", bodyLimit: 65536) { [self] req in
            let event = (try? req.json()) ?? .null
            logger.info("voice event", ["status": event["status"]?.stringValue ?? event["type"]?.stringValue ?? "?",
                                        "uuid": event["uuid"]?.stringValue ?? "", "direction": event["direction"]?.stringValue ?? "",
                                        "reason": event["reason"]?.stringValue ?? ""])
            return .noContent()
        }
        router.get("/phone/api/config") { [self] _ in
            .json(["test_number": testNumber.map(JSONValue.string) ?? .null] as JSONValue)
        }
    }
}
