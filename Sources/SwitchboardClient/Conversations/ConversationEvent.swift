import Wire

/// One conversation event, as the realtime socket pushes it and `GET …/events` lists it.
public struct ConversationEvent: Sendable, Hashable {
    /// What kind of event this is: the well-known types by name, others as they came.
    public enum Kind: Sendable, Hashable {
        case memberJoined, memberInvited, memberLeft, memberMedia
        case speakingOn, speakingOff, muteOn, muteOff, earmuffOn, earmuffOff
        case text
        /// `custom:<name>`: the name after the prefix.
        case custom(String)
        case other(String)

        init(type: String) {
            switch type {
            case "member:joined": self = .memberJoined
            case "member:invited": self = .memberInvited
            case "member:left": self = .memberLeft
            case "member:media": self = .memberMedia
            case "audio:speaking:on": self = .speakingOn
            case "audio:speaking:off": self = .speakingOff
            case "audio:mute:on": self = .muteOn
            case "audio:mute:off": self = .muteOff
            case "audio:earmuff:on": self = .earmuffOn
            case "audio:earmuff:off": self = .earmuffOff
            case "text", "message": self = .text
            default: self = type.hasPrefix("custom:") ? .custom(String(type.dropFirst(7))) : .other(type)
            }
        }
    }

    /// Increases by one per conversation, from 1.
    public var id: Int
    public var conversationID: String
    public var type: String
    public var kind: Kind
    /// The member the event is from, when there is one.
    public var from: String?
    public var timestamp: String?
    public var body: JSONValue

    /// The member the event is about: `body.member_id` for member events, else `from`.
    public var memberID: String? { body["member_id"]?.stringValue ?? from }
    /// The user name in member events (`body.user.name`).
    public var userName: String? { body["user"]?["name"]?.stringValue }
    /// The text of a `text` event.
    public var text: String? { body["text"]?.stringValue }
    /// Whether a `member:media` event's member is muted (by its own client or by the application).
    public var muted: Bool? { kind == .memberMedia ? body["media"]?["audio_settings"]?["muted"]?.boolValue : nil }

    init?(json: JSONValue) {
        guard let id = json["id"]?.intValue, let type = json["type"]?.stringValue,
              let cid = json["conversation_id"]?.stringValue ?? json["cid"]?.stringValue else { return nil }
        self.id = id
        self.type = type
        kind = Kind(type: type)
        conversationID = cid
        from = json["from"]?.stringValue
        timestamp = json["timestamp"]?.stringValue
        body = json["body"] ?? .object([:])
    }
}
