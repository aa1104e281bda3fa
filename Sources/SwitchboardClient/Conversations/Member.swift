import Wire

/// A member of a conversation: a user's place in it, joined, invited or left.
public struct Member: Sendable, Hashable, Identifiable {
    public enum State: String, Sendable {
        case joined = "JOINED"
        case invited = "INVITED"
        case left = "LEFT"
    }

    public var id: String
    public var conversationID: String?
    public var state: State
    public var userID: String?
    public var userName: String?
    public var displayName: String?
    public var audioEnabled: Bool
    public var muted: Bool
    public var earmuffed: Bool

    init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue ?? json["member_id"]?.stringValue else { return nil }
        self.id = id
        conversationID = json["conversation_id"]?.stringValue
        state = State(rawValue: (json["state"]?.stringValue ?? "").uppercased()) ?? .joined
        let user = json["_embedded"]?["user"] ?? json["user"]
        userID = user?["id"]?.stringValue
        userName = user?["name"]?.stringValue
        displayName = user?["display_name"]?.stringValue
        let settings = json["media"]?["audio_settings"]
        audioEnabled = settings?["enabled"]?.boolValue ?? json["media"]?["audio"]?.boolValue ?? false
        muted = settings?["muted"]?.boolValue ?? false
        earmuffed = settings?["earmuffed"]?.boolValue ?? false
    }
}
