import Foundation
import Wire

/// The conversations a session's user can see and what it does in them: the REST API
/// (`/v1/conversations/…`, docs/api-compatibility.md) with the session's token, plus the
/// realtime `rtc:*` requests for mute and earmuff.
public struct Conversations: Sendable {
    let session: Session
    let rest: RESTClient

    init(session: Session) {
        self.session = session
        rest = RESTClient(base: session.server, token: { [session] in session.token }, caFile: session.options.caFile)
    }

    /// The conversations the user is joined to or invited to.
    public func list(pageSize: Int = 10, order: ListOrder = .ascending, cursor: String? = nil) async throws(SessionError) -> Page<Conversation> {
        let json = try await rest.call(.GET, "/v1/conversations", query: [("page_size", String(pageSize)), ("order", order.rawValue), ("cursor", cursor)])
        return Page(json: json, key: "conversations", item: Conversation.init(json:))
    }

    /// Creates a conversation. This server creates conversations for application tokens only: a
    /// user token gets `.forbidden`, and apps create rooms through their app server.
    public func create(name: String? = nil, displayName: String? = nil, properties: [String: JSONValue] = [:]) async throws(SessionError) -> Conversation {
        var body: [String: JSONValue] = [:]
        if let name { body["name"] = .string(name) }
        if let displayName { body["display_name"] = .string(displayName) }
        if !properties.isEmpty { body["properties"] = .object(properties) }
        let json = try await rest.call(.POST, "/v1/conversations", body: .object(body))
        guard let c = Conversation(json: json) else { throw .server(code: "invalid-response", detail: "no conversation id") }
        return c
    }

    public func get(_ id: String) async throws(SessionError) -> Conversation {
        let json = try await rest.call(.GET, "/v1/conversations/\(RESTClient.escape(id))")
        guard let c = Conversation(json: json) else { throw .server(code: "invalid-response", detail: "no conversation id") }
        return c
    }

    /// Joins the conversation as the session's user (a no-op when already joined).
    @discardableResult
    public func join(_ id: String) async throws(SessionError) -> Member {
        let json = try await rest.call(.POST, "/v1/conversations/\(RESTClient.escape(id))/members", body: ["state": "joined"])
        guard let m = Member(json: json) else { throw .server(code: "invalid-response", detail: "no member id") }
        return m
    }

    /// Leaves the conversation (`member:left`); media in it stops.
    public func leave(_ id: String) async throws(SessionError) {
        _ = try await rest.call(.PATCH, "/v1/conversations/\(RESTClient.escape(id))/members/me", body: ["state": "left"])
    }

    /// Invites a user by name (`member:invited`). Needs a token allowed to invite.
    @discardableResult
    public func invite(userName: String, to id: String) async throws(SessionError) -> Member {
        let json = try await rest.call(.POST, "/v1/conversations/\(RESTClient.escape(id))/members",
                                       body: ["state": "invited", "user": ["name": .string(userName)]])
        guard let m = Member(json: json) else { throw .server(code: "invalid-response", detail: "no member id") }
        return m
    }

    public func members(in id: String, pageSize: Int = 100, order: ListOrder = .ascending, cursor: String? = nil) async throws(SessionError) -> Page<Member> {
        let json = try await rest.call(.GET, "/v1/conversations/\(RESTClient.escape(id))/members",
                                       query: [("page_size", String(pageSize)), ("order", order.rawValue), ("cursor", cursor)])
        return Page(json: json, key: "members", item: Member.init(json:))
    }

    /// The session user's own member in the conversation.
    public func myMember(in id: String) async throws(SessionError) -> Member {
        let json = try await rest.call(.GET, "/v1/conversations/\(RESTClient.escape(id))/members/me")
        guard let m = Member(json: json) else { throw .server(code: "invalid-response", detail: "no member id") }
        return m
    }

    /// Stored events, oldest first, from `startID` on; `type` filters by event type.
    public func events(in id: String, startID: Int? = nil, type: String? = nil, pageSize: Int = 100, order: ListOrder = .ascending,
                       cursor: String? = nil) async throws(SessionError) -> Page<ConversationEvent> {
        let json = try await rest.call(.GET, "/v1/conversations/\(RESTClient.escape(id))/events", query: [
            ("page_size", String(pageSize)), ("order", order.rawValue), ("start_id", startID.map(String.init)),
            ("event_type", type), ("cursor", cursor),
        ])
        return Page(json: json, key: "events") { item in
            var e = item
            if e["conversation_id"] == nil, case .object(var o) = e { o["conversation_id"] = .string(id); e = .object(o) }
            return ConversationEvent(json: e)
        }
    }

    /// Sends a text message; everyone in the conversation receives a `text` event.
    @discardableResult
    public func send(text: String, to id: String) async throws(SessionError) -> ConversationEvent {
        try await post(type: "text", body: ["text": .string(text)], to: id)
    }

    /// Sends a custom event `custom:<name>` with any JSON body.
    @discardableResult
    public func send(custom name: String, body: JSONValue, to id: String) async throws(SessionError) -> ConversationEvent {
        try await post(type: "custom:" + name, body: body, to: id)
    }

    private func post(type: String, body: JSONValue, to id: String) async throws(SessionError) -> ConversationEvent {
        var json = try await rest.call(.POST, "/v1/conversations/\(RESTClient.escape(id))/events", body: ["type": .string(type), "body": body])
        if json["conversation_id"] == nil, case .object(var o) = json { o["conversation_id"] = .string(id); json = .object(o) }
        guard let e = ConversationEvent(json: json) else { throw .server(code: "invalid-response", detail: "no event id") }
        return e
    }

    /// Stops (or restarts) forwarding the user's microphone (`rtc:mute`; media must be enabled).
    public func setMuted(_ muted: Bool, in id: String) async throws(SessionError) {
        try await session.request("rtc:mute", ["conversation_id": .string(id), "muted": .bool(muted)])
    }

    /// Stops (or restarts) everything the user hears in the conversation (`rtc:earmuff`).
    public func setEarmuffed(_ earmuffed: Bool, in id: String) async throws(SessionError) {
        try await session.request("rtc:earmuff", ["conversation_id": .string(id), "earmuffed": .bool(earmuffed)])
    }
}

extension Session {
    /// Conversations, members and events over REST with this session's token.
    public var conversations: Conversations { Conversations(session: self) }
}
