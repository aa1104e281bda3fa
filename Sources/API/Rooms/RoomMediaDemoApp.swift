import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import Wire

/// The drop-in rooms app server built in, so `switchboard serve` alone runs the web app at
/// `/rooms`: the same three routes as `switchboard-dropin`, under `/rooms/api/`.
///
/// - `POST /rooms/api/auth {name}` → `{name, jwt, user_id}` (creates the user on first use)
/// - `GET /rooms/api/rooms` → `[{id, display_name}]`, newest first
/// - `POST /rooms/api/rooms {display_name}` → `{id}` (a conversation with a 10-minute ttl)
///
/// Everything lives in one application named `rooms-demo` of the primary account, created
/// on first use; its private key is kept in `<data>/rooms-demo.json` (mode 0600) so tokens
/// stay valid across restarts. Anyone who can reach the server can log in by name: this is
/// a demo, as the reference app server is.
final class RoomMediaDemoApp: Sendable {
    static let applicationName = "rooms-demo"
    let core: PlatformCore
    let apiKey: String
    let file: String
    let roomTTL = 600
    private let demo: DemoApplication

    init(core: PlatformCore, apiKey: String, dataDirectory: String) {
        self.core = core
        self.apiKey = apiKey
        file = dataDirectory + "/rooms-demo.json"
        demo = DemoApplication(core: core, apiKey: apiKey, name: Self.applicationName, file: file)
    }

    /// The demo application and its signing key, created (or recovered from the file) once.
    func application() throws -> (applicationID: String, key: RSAPrivateKey) {
        try demo.get()
    }

    func register(on router: inout Router) {
        router.post("/rooms/api/auth", bodyLimit: 4096) { [self] req in
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
            let now = Int(Date().timeIntervalSince1970)
            let paths = ACL.clientPaths
            let jwt = try JWT.sign(claims: [
                "application_id": .string(appID), "sub": .string(name), "iat": .number(Double(now)),
                "exp": .number(Double(now + 6 * 3600)), "jti": .string(UUID().uuidString.lowercased()),
                "acl": ["paths": .object(Dictionary(uniqueKeysWithValues: paths.map { ($0, JSONValue.object([:])) }))],
            ], key: .rs256(key))
            return .json(["name": .string(name), "jwt": .string(jwt), "user_id": .string(user.id)] as JSONValue)
        }
        router.get("/rooms/api/rooms") { [self] _ in
            let (appID, _) = try application()
            let page = try core.conversations.list(applicationID: appID, page: PageRequest(pageSize: 100, order: .desc))
            return .json(JSONValue.array(page.items.map { c in
                ["id": .string(c.id), "display_name": .string(c.displayName ?? c.name)]
            }))
        }
        router.post("/rooms/api/rooms", bodyLimit: 4096) { [self] req in
            guard let display = try req.json()["display_name"]?.stringValue?.trimmingCharacters(in: .whitespaces),
                  !display.isEmpty, display.count <= 200 else {
                throw APIError.badRequest("display_name is required (1 to 200 characters).", code: "missing-display-name")
            }
            let (appID, _) = try application()
            let c = try core.conversations.create(applicationID: appID, input: Conversations.Input(
                displayName: .some(display), properties: ["ttl": .number(Double(roomTTL))]))
            return .json(["id": .string(c.id)] as JSONValue, status: 201)
        }
    }
}
