import Foundation
import Wire

/// A conversation (a room): members and an ordered event log.
public struct Conversation: Sendable, Equatable {
    public var id: String
    public var applicationID: String
    public var name: String
    public var displayName: String?
    public var imageURL: String?
    /// `properties` as given, including `ttl` and `custom_data`.
    public var properties: JSONValue
    public var ttl: Int?
    public var state: String
    public var lastEventID: Int64
    public var createdAt: Date
    public var updatedAt: Date
}

/// Member states on the wire (v1 uses upper case).
public enum MemberState: String, Sendable {
    case invited = "INVITED"
    case joined = "JOINED"
    case left = "LEFT"

    /// Accepts either case, as clients send both.
    public init?(wire: String) { self.init(rawValue: wire.uppercased()) }
}

/// Audio settings of a member.
public struct MemberMedia: Sendable, Equatable {
    public var enabled = false
    public var muted = false
    public var earmuffed = false

    public init(enabled: Bool = false, muted: Bool = false, earmuffed: Bool = false) {
        self.enabled = enabled
        self.muted = muted
        self.earmuffed = earmuffed
    }

    var json: JSONValue {
        ["audio_settings": ["enabled": .bool(enabled), "muted": .bool(muted), "earmuffed": .bool(earmuffed)],
         "audio": .bool(enabled)]
    }

    init(json: JSONValue?) {
        let a = json?["audio_settings"]
        enabled = a?["enabled"]?.boolValue ?? json?["audio"]?.boolValue ?? false
        muted = a?["muted"]?.boolValue ?? false
        earmuffed = a?["earmuffed"]?.boolValue ?? false
    }
}

public struct Member: Sendable, Equatable {
    public var id: String
    public var conversationID: String
    public var userID: String
    public var userName: String
    public var userDisplayName: String?
    public var state: MemberState
    public var channel: JSONValue
    public var media: MemberMedia
    public var initiator: JSONValue
    public var invitedAt: Date?
    public var joinedAt: Date?
    public var leftAt: Date?
}

/// One event of a conversation; `id` increases by one per conversation.
public struct ConversationEvent: Sendable, Equatable {
    public var conversationID: String
    public var id: Int64
    public var type: String
    public var from: String?
    public var body: JSONValue
    public var timestamp: Date
    public var applicationID: String
    /// The user the event is about (member events), who hears it even when no longer a member.
    public var subjectUserID: String?

    /// The JSON the REST API, the realtime gateway and webhooks all show.
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "id": .number(Double(id)), "type": .string(type), "body": body,
            "timestamp": .string(timestamp.iso8601), "conversation_id": .string(conversationID),
            "_links": ["self": ["href": .string("/v1/conversations/\(conversationID)/events/\(id)")]],
        ]
        if let from { o["from"] = .string(from) }
        return .object(o)
    }

    /// Event types clients may post; `member:*` events are made by the server from member changes.
    static func isPostable(_ type: String) -> Bool {
        if type.hasPrefix("custom:") { return type.count > 7 && type.count <= 100 }
        return ["text", "message", "ephemeral", "audio:speaking:on", "audio:speaking:off", "audio:mute:on", "audio:mute:off",
                "audio:dtmf", "audio:play", "audio:say", "audio:record", "audio:earmuff:on", "audio:earmuff:off", "member:media"].contains(type)
    }
}
