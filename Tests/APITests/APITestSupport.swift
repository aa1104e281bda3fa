import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import Wire
@testable import API

/// Wall-clock time the test moves by hand.
final class ManualClock: WallClock {
    private let current: Mutex<Date>
    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = Mutex(start) }
    func now() -> Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
}

/// The accounts routes over a store in a temporary directory, answered in-process with no socket.
final class TestPlatform: Sendable {
    let directory: String
    let clock: ManualClock
    let core: PlatformCore
    let account: Account
    let app: HTTPApplication

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("api-tests-\(UUID4.generate())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        clock = ManualClock()
        core = try PlatformCore(dataDirectory: directory, clock: clock)
        account = try core.accounts.ensurePrimary().0
        let authenticator = Authenticator(core: core)
        var router = Router()
        ApplicationRoutes(core: core).register(on: &router)
        UserRoutes(core: core).register(on: &router)
        NumberRoutes(core: core, authenticator: authenticator).register(on: &router)
        SIPRoutes(core: core, authenticator: authenticator, service: nil).register(on: &router)
        ConversationRoutes(core: core, capacity: 3).register(on: &router)
        app = HTTPApplication(router: router, middleware: [LinkBaseMiddleware(publicURL: "https://api.switchboard.test"),
                                                           AuthMiddleware(authenticator: authenticator)])
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    var basic: String { Self.basic(account.apiKey, account.apiSecret) }

    static func basic(_ key: String, _ secret: String) -> String { "Basic " + Base64.encode("\(key):\(secret)") }

    func send(_ method: HTTPMethod, _ target: String, auth: String? = nil, json: JSONValue? = nil, form: String? = nil,
              headers extra: [(String, String)] = []) async -> Reply {
        var headers = HTTPHeaders([("Host", "switchboard.test")] + extra)
        if let auth { headers["Authorization"] = auth }
        var body: [UInt8] = []
        if let json {
            body = Array(try! JSONEncoder().encode(json))
            headers["Content-Type"] = "application/json"
        } else if let form {
            body = Array(form.utf8)
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        }
        let response = await app.respond(to: HTTPRequest(head: HTTPRequestHead(method: method, target: target, headers: headers), body: body))
        return Reply(response: response)
    }

    /// Creates an application through the API; returns its id and a signing key.
    func createApplication(_ name: String = "test") async throws -> (id: String, key: RSAPrivateKey) {
        let r = await send(.POST, "/v2/applications", auth: basic, json: ["name": .string(name)])
        guard r.status == 201, let id = r.json["id"]?.stringValue, let pem = r.json["keys"]?["private_key"]?.stringValue else {
            throw TestFailure("create application: \(r.status) \(r.text)")
        }
        return (id, try RSAPrivateKey(pem: pem))
    }

    func token(app: String, key: RSAPrivateKey, sub: String? = nil, acl: [String]? = nil, lifetime: TimeInterval = 900,
               iatOffset: TimeInterval = 0, extra: [String: JSONValue] = [:]) -> String {
        let iat = clock.now().timeIntervalSince1970.rounded(.down) + iatOffset
        var claims: [String: JSONValue] = ["application_id": .string(app), "iat": .number(iat), "exp": .number(iat + lifetime),
                                           "jti": .string(UUID4.generate())]
        if let sub { claims["sub"] = .string(sub) }
        if let acl { claims["acl"] = ["paths": .object(Dictionary(uniqueKeysWithValues: acl.map { ($0, JSONValue.object([:])) }))] }
        claims.merge(extra) { _, b in b }
        return try! JWT.sign(claims: claims, key: .rs256(key))
    }
}

struct Reply {
    let response: HTTPResponse
    var status: Int { response.status }
    var text: String { String(decoding: response.bodyBytes, as: UTF8.self) }
    var json: JSONValue { (try? JSONDecoder().decode(JSONValue.self, from: Data(response.bodyBytes))) ?? .null }
    func header(_ name: String) -> String? { response.headers[name] }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

func bearer(_ token: String) -> String { "Bearer " + token }
