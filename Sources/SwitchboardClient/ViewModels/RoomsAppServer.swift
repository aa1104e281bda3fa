import Foundation
import Wire

/// The rooms app's own server (`switchboard-dropin`, or `/rooms/api` of `serve --dev`): logs a
/// name in and gives it a user token, lists rooms and creates them.
public struct RoomsAppServer: Sendable {
    public struct Login: Sendable, Hashable {
        public var name: String
        public var token: String
    }

    public struct Room: Sendable, Hashable, Identifiable {
        public var id: String
        public var title: String
    }

    public let url: URL
    public var caFile: String?

    public init(url: URL, caFile: String? = nil) {
        self.url = url
        self.caFile = caFile
    }

    private var client: RESTClient { RESTClient(base: url, token: { "" }, caFile: caFile) }

    /// `POST /auth {name}` → a user token for that name (the user is created on first use).
    public func logIn(name: String) async throws(SessionError) -> Login {
        let json = try await client.call(.POST, "/auth", body: ["name": .string(name)])
        guard let token = json["jwt"]?.stringValue else { throw .server(code: "invalid-response", detail: "no jwt") }
        return Login(name: json["name"]?.stringValue ?? name, token: token)
    }

    /// `GET /rooms`, newest first.
    public func rooms() async throws(SessionError) -> [Room] {
        let json = try await client.call(.GET, "/rooms")
        return (json.arrayValue ?? []).compactMap { r in
            r["id"]?.stringValue.map { Room(id: $0, title: r["display_name"]?.stringValue ?? $0) }
        }
    }

    /// `POST /rooms {display_name}` → the new room's id.
    public func createRoom(displayName: String) async throws(SessionError) -> String {
        let json = try await client.call(.POST, "/rooms", body: ["display_name": .string(displayName)])
        guard let id = json["id"]?.stringValue else { throw .server(code: "invalid-response", detail: "no room id") }
        return id
    }
}
