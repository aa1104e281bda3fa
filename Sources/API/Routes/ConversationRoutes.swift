import Foundation
import Live
import Platform
import Runtime
import Wire

/// Conversation API v1 (+ the legacy v0.1/v0.2 shapes), with the access rules for user tokens:
/// a user reads conversations and members of conversations it belongs to, joins and leaves as itself,
/// and posts events only as its own joined member. Nothing crosses applications.
struct ConversationRoutes {
    let core: PlatformCore
    /// Joined members a conversation admits (`SWITCHBOARD_ROOM_CAPACITY`); one more is `room-full`.
    let capacity: Int
    /// Audio rooms: an update may change a live room's `room_mode` (none in tests of the REST API alone).
    var rooms: Rooms? = nil
    var conversations: Conversations { core.conversations }

    /// A conversation's create/update body; `properties.room_mode` and `room_mix_above` are checked here.
    static func input(_ req: HTTPRequest) throws -> Conversations.Input {
        let input = try Conversations.Input(json: try req.json())
        _ = try RoomModeSetting(properties: input.properties)
        return input
    }

    func register(on router: inout Router) {
        let conversations = self.conversations
        let core = self.core
        let capacity = self.capacity
        let rooms = self.rooms

        router.post("/v1/conversations") { req in
            let app = try req.requireApplicationToken()
            let c = try conversations.create(applicationID: app.id, input: try Self.input(req))
            return .jsonObject(Self.render(c, base: req.baseURL), status: 201)
        }
        router.post("/v0.1/conversations") { req in
            let app = try req.requireApplicationToken()
            let c = try conversations.create(applicationID: app.id, input: try Self.input(req))
            return .jsonObject(["id": c.id, "href": "\(req.baseURL)/v0.1/conversations/\(c.id)"], status: 200)
        }
        router.get("/v1/conversations") { req in
            let (app, p) = try req.requireApplication()
            let page = try PageRequest.parse(req.query)
            let result = try conversations.list(applicationID: app.id, page: page, memberUserID: p.user?.id)
            return .jsonObject(result.envelope(name: "conversations", path: "\(req.baseURL)/v1/conversations", query: Self.pagingQuery(req)) {
                Self.render($0, base: req.baseURL)
            })
        }
        router.get("/v0.2/conversations") { req in
            let (app, p) = try req.requireApplication()
            let page = try PageRequest.parse(req.query)
            let result = try conversations.list(applicationID: app.id, page: page, memberUserID: p.user?.id)
            var env = result.envelope(name: "data", path: "\(req.baseURL)/v0.2/conversations", query: Self.pagingQuery(req)) { Self.render($0, base: req.baseURL) }
            env["_embedded"] = ["data": ["conversations": result.items.map { Self.render($0, base: req.baseURL) }]]
            return .jsonObject(env)
        }
        router.get("/v1/conversations/:cid") { req in
            let (app, _) = try req.requireApplication()
            return .jsonObject(Self.render(try conversations.get(id: req.parameter("cid"), applicationID: app.id), base: req.baseURL))
        }
        router.put("/v1/conversations/:cid") { req in
            let app = try req.requireApplicationToken()
            let c = try conversations.update(id: req.parameter("cid"), applicationID: app.id, input: try Self.input(req))
            await rooms?.conversationUpdated(conversationID: c.id, applicationID: app.id)
            return .jsonObject(Self.render(c, base: req.baseURL))
        }
        router.delete("/v1/conversations/:cid") { req in
            let app = try req.requireApplicationToken()
            try conversations.delete(id: req.parameter("cid"), applicationID: app.id)
            return .noContent()
        }
        router.get("/v1/users/:id/conversations") { req in
            let (app, p) = try req.requireApplication()
            guard let user = try core.users.resolve(req.parameter("id"), applicationID: app.id) else { throw PlatformError.notFound("user") }
            if let me = p.user, me.id != user.id { throw APIError.forbidden("A user may only list its own conversations.") }
            let page = try PageRequest.parse(req.query)
            let result = try conversations.list(applicationID: app.id, page: page, memberUserID: user.id)
            return .jsonObject(result.envelope(name: "conversations", path: "\(req.baseURL)/v1/users/\(user.id)/conversations", query: Self.pagingQuery(req)) {
                Self.render($0, base: req.baseURL)
            })
        }

        // Members
        router.get("/v1/conversations/:cid/members") { req in
            let (app, p) = try req.requireApplication()
            let cid = req.parameter("cid")
            try Self.requireBelongs(p, cid, conversations)
            let page = try PageRequest.parse(req.query)
            let result = try conversations.members(conversationID: cid, applicationID: app.id, page: page)
            return .jsonObject(result.envelope(name: "members", path: "\(req.baseURL)/v1/conversations/\(cid)/members", query: Self.pagingQuery(req)) {
                Self.render($0, base: req.baseURL)
            })
        }
        router.post("/v1/conversations/:cid/members") { req in
            let (app, p) = try req.requireApplication()
            let body = try req.json()
            let cid = req.parameter("cid")
            let stateText = body["state"]?.stringValue ?? "joined"
            guard let state = MemberState(wire: stateText), state != .left else {
                throw APIError.badRequest("state must be joined or invited.", code: "invalid-member-state")
            }
            let user: User
            if let ref = body["user"]?["id"]?.stringValue ?? body["user"]?["name"]?.stringValue ?? body["user_id"]?.stringValue {
                guard let u = try core.users.resolve(ref, applicationID: app.id) else { throw PlatformError.notFound("user") }
                user = u
            } else if let me = p.user {
                user = me
            } else {
                throw APIError.badRequest("user.id or user.name is required.", code: "missing-user")
            }
            if let me = p.user {
                guard me.id == user.id else { throw APIError.forbidden("A user may only join as itself.") }
                guard state == .joined else { throw APIError.forbidden("A user may only join as itself, not invite.") }
            }
            let media = body["media"].map { MemberMedia(enabled: $0["audio_settings"]?["enabled"]?.boolValue ?? $0["audio"]?.boolValue ?? false,
                                                         muted: $0["audio_settings"]?["muted"]?.boolValue ?? false,
                                                         earmuffed: $0["audio_settings"]?["earmuffed"]?.boolValue ?? false) }
            let initiator: JSONValue = p.user.map { ["joined": ["user_id": .string($0.id), "member_id": .null, "is_system": false]] }
                ?? ["joined": ["is_system": true]]
            let m = try conversations.addMember(conversationID: cid, applicationID: app.id, user: user, state: state,
                                                channel: body["channel"], media: media, initiator: initiator, capacity: capacity)
            return .jsonObject(Self.render(m, base: req.baseURL), status: 201)
        }
        router.get("/v1/conversations/:cid/members/:mid") { req in
            let (app, p) = try req.requireApplication()
            let cid = req.parameter("cid")
            let mid = try Self.memberID(req, p, conversations)
            try Self.requireBelongs(p, cid, conversations)
            return .jsonObject(Self.render(try conversations.member(id: mid, conversationID: cid, applicationID: app.id), base: req.baseURL))
        }
        router.patch("/v1/conversations/:cid/members/:mid") { req in
            let (app, p) = try req.requireApplication()
            let cid = req.parameter("cid")
            let mid = try Self.memberID(req, p, conversations)
            let current = try conversations.member(id: mid, conversationID: cid, applicationID: app.id)
            if let me = p.user, me.id != current.userID { throw APIError.forbidden("A user may only change its own member.") }
            let body = try req.json()
            var result = current
            if let media = body["media"] {
                let settings = media["audio_settings"]
                result = try conversations.setMedia(memberID: mid, conversationID: cid, applicationID: app.id, media: MemberMedia(
                    enabled: settings?["enabled"]?.boolValue ?? media["audio"]?.boolValue ?? current.media.enabled,
                    muted: settings?["muted"]?.boolValue ?? current.media.muted,
                    earmuffed: settings?["earmuffed"]?.boolValue ?? current.media.earmuffed))
            }
            if let s = body["state"]?.stringValue {
                guard MemberState(wire: s) == .left else { throw APIError.badRequest("Only state LEFT can be set here.", code: "invalid-member-state") }
                result = try conversations.leave(memberID: mid, conversationID: cid, applicationID: app.id, reason: body["reason"]?["text"]?.stringValue)
            }
            return .jsonObject(Self.render(result, base: req.baseURL))
        }

        // Events
        router.post("/v1/conversations/:cid/events") { req in
            let (app, p) = try req.requireApplication()
            let cid = req.parameter("cid")
            let body = try req.json()
            guard let type = body["type"]?.stringValue else { throw APIError.badRequest("type is required.", code: "missing-type") }
            var from = body["from"]?.stringValue
            if let me = p.user {
                guard let mine = try conversations.member(ofUser: me.id, conversationID: cid), mine.state != .left else {
                    throw APIError.forbidden("Only a member may post events here.")
                }
                if from == nil { from = mine.id }
                guard from == mine.id else { throw APIError.forbidden("A user may only post events as its own member.") }
            }
            let e = try conversations.postEvent(conversationID: cid, applicationID: app.id, type: type, from: from, body: body["body"] ?? .object([:]))
            return .json(e.json, status: 201)
        }
        router.get("/v1/conversations/:cid/events") { req in
            let (app, p) = try req.requireApplication()
            let cid = req.parameter("cid")
            try Self.requireBelongs(p, cid, conversations)
            let q = req.query
            let page = try PageRequest.parse(q)
            let after = try q["start_id"].map { s -> Int64 in
                guard let n = Int64(s), n >= 1 else { throw APIError.badRequest("start_id must be a positive number.") }
                return n - 1
            }
            let result = try conversations.events(conversationID: cid, applicationID: app.id, page: page, afterID: after, type: q["event_type"])
            return .jsonObject(result.envelope(name: "events", path: "\(req.baseURL)/v1/conversations/\(cid)/events", query: Self.pagingQuery(req)) {
                JSONBridge.object($0.json)
            })
        }
        router.get("/v1/conversations/:cid/events/:eid") { req in
            let (app, p) = try req.requireApplication()
            let cid = req.parameter("cid")
            try Self.requireBelongs(p, cid, conversations)
            guard let id = Int64(req.parameter("eid")) else { throw PlatformError.notFound("event") }
            return .json(try conversations.event(id: id, conversationID: cid, applicationID: app.id).json)
        }
        router.delete("/v1/conversations/:cid/events/:eid") { req in
            let app = try req.requireApplicationToken()
            guard let id = Int64(req.parameter("eid")) else { throw PlatformError.notFound("event") }
            try conversations.deleteEvent(id: id, conversationID: req.parameter("cid"), applicationID: app.id)
            return .noContent()
        }
    }

    static func pagingQuery(_ req: HTTPRequest) -> [String: String] {
        req.query.filter { ["order", "cursor", "event_type", "start_id"].contains($0.key) }
    }

    /// `me` means the caller's member in this conversation.
    static func memberID(_ req: HTTPRequest, _ p: Principal, _ conversations: Conversations) throws -> String {
        let mid = req.parameter("mid")
        guard mid == "me" else { return mid }
        guard let me = p.user else { throw APIError.badRequest("'me' needs a user token.", code: "invalid-member") }
        guard let m = try conversations.member(ofUser: me.id, conversationID: req.parameter("cid")) else { throw PlatformError.notFound("member") }
        return m.id
    }

    /// User tokens may only read inside conversations they are joined to or invited to.
    static func requireBelongs(_ p: Principal, _ cid: String, _ conversations: Conversations) throws {
        guard let me = p.user else { return }
        guard let m = try conversations.member(ofUser: me.id, conversationID: cid), m.state != .left else {
            throw APIError.forbidden("The user is not a member of this conversation.")
        }
    }

    static func render(_ c: Conversation, base: String) -> [String: Any] {
        [
            "id": c.id, "name": c.name, "display_name": c.displayName as Any? ?? NSNull(), "image_url": c.imageURL as Any? ?? NSNull(),
            "state": c.state, "sequence_number": c.lastEventID, "properties": JSONBridge.object(c.properties),
            "timestamp": ["created": c.createdAt.iso8601, "updated": c.updatedAt.iso8601],
            "_links": ["self": ["href": "\(base)/v1/conversations/\(c.id)"]],
        ]
    }

    static func render(_ m: Member, base: String) -> [String: Any] {
        var ts: [String: Any] = [:]
        if let t = m.invitedAt { ts["invited"] = t.iso8601 }
        if let t = m.joinedAt { ts["joined"] = t.iso8601 }
        if let t = m.leftAt { ts["left"] = t.iso8601 }
        return [
            "id": m.id, "conversation_id": m.conversationID, "state": m.state.rawValue,
            "_embedded": ["user": ["id": m.userID, "name": m.userName, "display_name": m.userDisplayName as Any? ?? NSNull()]],
            "timestamp": ts, "initiator": JSONBridge.object(m.initiator), "channel": JSONBridge.object(m.channel),
            "media": ["audio_settings": ["enabled": m.media.enabled, "muted": m.media.muted, "earmuffed": m.media.earmuffed], "audio": m.media.enabled],
            "_links": ["href": "\(base)/v1/conversations/\(m.conversationID)/members/\(m.id)"],
        ]
    }
}
