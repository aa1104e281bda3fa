import Foundation
import Wire

/// The video chat app's own server (`switchboard-video`): a room's session, made on its first use, and a
/// token for it — what a video chat client asks for before it connects (`VideoSession.connect`).
public struct VideoAppServer: Sendable {
    public struct Room: Sendable, Hashable {
        public var applicationID: String
        public var sessionID: String
        public var token: String
    }

    public let url: URL
    public var caFile: String?

    public init(url: URL, caFile: String? = nil) {
        self.url = url
        self.caFile = caFile
    }

    /// `GET /room/NAME` → the room's session and a publisher token for it.
    public func room(_ name: String) async throws(SessionError) -> Room {
        let path = "/room/" + (name.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? name)
        let json = try await RESTClient(base: url, token: { "" }, caFile: caFile).call(.GET, path)
        guard let sessionID = json["sessionId"]?.stringValue, let token = json["token"]?.stringValue else {
            throw .server(code: "invalid-response", detail: "no sessionId or token")
        }
        return Room(applicationID: json["applicationId"]?.stringValue ?? "", sessionID: sessionID, token: token)
    }
}
