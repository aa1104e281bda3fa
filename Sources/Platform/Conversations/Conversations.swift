import Crypto
import Foundation
import Store
import Wire

/// Conversations, members and events in the store; every change that clients see becomes an event.
public final class Conversations: Sendable {
    let db: any SQLStore
    let clock: any WallClock
    let users: Users
    public let bus: any ConversationEventBus

    init(db: any SQLStore, clock: any WallClock, users: Users, bus: any ConversationEventBus) {
        self.db = db
        self.clock = clock
        self.users = users
        self.bus = bus
    }

    // MARK: Conversations

    public typealias Input = ResourceInput

    /// `properties.ttl`, when given, is a positive number of seconds.
    static func validateTTL(_ properties: JSONValue?) throws {
        if let ttl = properties?["ttl"], ttl.intValue == nil || ttl.intValue! < 1 {
            throw PlatformError.invalid("properties.ttl must be a positive number of seconds.")
        }
    }

    public func create(applicationID: String, input: Input) throws -> Conversation {
        try Self.validateTTL(input.properties)
        let name = input.name ?? "CON-" + UUID4.generate()
        guard !name.isEmpty, name.count <= 200 else { throw PlatformError.invalid("name must be 1 to 200 characters.") }
        let now = clock.now()
        let props = input.properties ?? .object([:])
        let c = Conversation(id: "CON-" + UUID4.generate(), applicationID: applicationID, name: name,
                             displayName: input.displayName ?? nil, imageURL: input.imageURL ?? nil, properties: props,
                             ttl: props["ttl"]?.intValue, state: "ACTIVE", lastEventID: 0, createdAt: now, updatedAt: now)
        do {
            try db.execute("""
                INSERT INTO conversations (id, application_id, name, display_name, image_url, properties, ttl, empty_since, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(c.id), .text(applicationID), .text(name), SQLValue(c.displayName), SQLValue(c.imageURL),
                      .text(JSONText.encode(props)), SQLValue(c.ttl.map(Int64.init)), .int(now.millis), .int(now.millis), .int(now.millis)])
        } catch {
            throw uniqueViolation(error, as: .conflict("A conversation named '\(name)' already exists in this application."))
        }
        return c
    }

    public func get(id: String, applicationID: String) throws -> Conversation {
        guard let r = try db.queryOne("SELECT * FROM conversations WHERE id = ? AND application_id = ?", [.text(id), .text(applicationID)]) else {
            throw PlatformError.notFound("conversation")
        }
        return Self.conversation(r)
    }

    /// The application's conversation of this name, if there is one.
    public func find(name: String, applicationID: String) throws -> Conversation? {
        try db.queryOne("SELECT * FROM conversations WHERE name = ? AND application_id = ?", [.text(name), .text(applicationID)]).map(Self.conversation)
    }

    /// Lists conversations of the application, or only those `userID` is a member of.
    public func list(applicationID: String, page: PageRequest, memberUserID: String? = nil) throws -> Page<Conversation> {
        let s = page.sql
        var sql = "SELECT * FROM conversations WHERE application_id = ?"
        var b: [SQLValue] = [.text(applicationID)]
        if let u = memberUserID {
            sql += " AND id IN (SELECT conversation_id FROM members WHERE user_id = ? AND state IN ('JOINED','INVITED'))"
            b.append(.text(u))
        }
        sql += " AND \(s.condition) ORDER BY seq \(s.orderBy) LIMIT ?"
        if let x = s.binding { b.append(.int(x)) }
        b.append(.int(Int64(page.pageSize + 1)))
        let rows = try db.query(sql, b).map { ($0.int64("seq") ?? 0, Self.conversation($0)) }
        return Page.make(rows: rows, request: page)
    }

    public func update(id: String, applicationID: String, input: Input) throws -> Conversation {
        try Self.validateTTL(input.properties)
        var c = try get(id: id, applicationID: applicationID)
        if let n = input.name { c.name = n }
        if let d = input.displayName { c.displayName = d }
        if let i = input.imageURL { c.imageURL = i }
        if let p = input.properties { c.properties = p; c.ttl = p["ttl"]?.intValue }
        c.updatedAt = clock.now()
        do {
            try db.execute("UPDATE conversations SET name = ?, display_name = ?, image_url = ?, properties = ?, ttl = ?, updated_at = ? WHERE id = ?",
                           [.text(c.name), SQLValue(c.displayName), SQLValue(c.imageURL), .text(JSONText.encode(c.properties)),
                            SQLValue(c.ttl.map(Int64.init)), .int(c.updatedAt.millis), .text(c.id)])
        } catch {
            throw uniqueViolation(error, as: .conflict("A conversation named '\(c.name)' already exists in this application."))
        }
        return c
    }

    public func delete(id: String, applicationID: String) throws {
        let c = try get(id: id, applicationID: applicationID)
        try db.execute("DELETE FROM conversations WHERE id = ?", [.text(c.id)])
    }

    /// Deletes conversations whose ttl has passed since they last had a member; returns how many.
    @discardableResult
    public func sweepExpired() throws -> Int {
        try db.execute("DELETE FROM conversations WHERE ttl IS NOT NULL AND empty_since IS NOT NULL AND empty_since + ttl * 1000 <= ?",
                       [.int(clock.now().millis)])
    }

    // MARK: Members

    /// Joins (or invites) a user. Joining again while joined returns the existing member.
    /// With a `capacity`, a join that would make more joined members than that throws
    /// `PlatformError.full` and changes nothing; the count and the insert are one transaction.
    public func addMember(conversationID: String, applicationID: String, user: User, state: MemberState,
                          channel: JSONValue? = nil, media: MemberMedia? = nil, initiator: JSONValue? = nil,
                          capacity: Int? = nil) throws -> Member {
        guard state != .left else { throw PlatformError.invalid("A new member must be joined or invited.") }
        _ = try get(id: conversationID, applicationID: applicationID)
        let now = clock.now()
        let bus = self.bus
        let appID = applicationID
        let member = try db.write { c -> Member in
            let existing = try c.queryOne("""
                SELECT * FROM members WHERE conversation_id = ? AND user_id = ? AND state != 'LEFT' ORDER BY seq DESC LIMIT 1
                """, [.text(conversationID), .text(user.id)])
            var m: Member
            let existingMember = existing.map { Self.member($0, user: user) }
            if let existingMember, existingMember.state == .joined || state == .invited { return existingMember }
            if let capacity, state == .joined {
                let joined = try c.queryOne("SELECT COUNT(*) AS n FROM members WHERE conversation_id = ? AND state = 'JOINED'",
                                            [.text(conversationID)])?.int64("n") ?? 0
                guard joined < capacity else { throw PlatformError.full(capacity: capacity) }
            }
            if let existingMember {
                m = existingMember
                // An invited member accepting.
                m.state = .joined
                m.joinedAt = now
                if let media { m.media = media }
                try c.execute("UPDATE members SET state = 'JOINED', joined_at = ?, media = ? WHERE id = ?",
                              [.int(now.millis), .text(JSONText.encode(m.media.json)), .text(m.id)])
            } else {
                m = Member(id: "MEM-" + UUID4.generate(), conversationID: conversationID, userID: user.id, userName: user.name,
                           userDisplayName: user.displayName, state: state, channel: channel ?? ["type": "app"],
                           media: media ?? MemberMedia(), initiator: initiator ?? .object([:]),
                           invitedAt: state == .invited ? now : nil, joinedAt: state == .joined ? now : nil, leftAt: nil)
                try c.execute("""
                    INSERT INTO members (id, conversation_id, user_id, state, channel, media, initiator, invited_at, joined_at)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.text(m.id), .text(conversationID), .text(user.id), .text(state.rawValue), .text(JSONText.encode(m.channel)),
                          .text(JSONText.encode(m.media.json)), .text(JSONText.encode(m.initiator)),
                          SQLValue(m.invitedAt.map(\.millis)), SQLValue(m.joinedAt.map(\.millis))])
            }
            if m.state == .joined {
                try c.execute("UPDATE conversations SET empty_since = NULL WHERE id = ?", [.text(conversationID)])
            }
            _ = try Self.appendEvent(c, bus: bus, applicationID: appID, conversationID: conversationID,
                                     type: m.state == .joined ? "member:joined" : "member:invited", from: m.id,
                                     body: Self.memberEventBody(m), subjectUserID: user.id, now: now)
            return m
        }
        return member
    }

    /// Marks a member LEFT; leaving twice is a 400 `invalid-member-state`.
    public func leave(memberID: String, conversationID: String, applicationID: String, reason: String? = nil) throws -> Member {
        _ = try get(id: conversationID, applicationID: applicationID)
        let now = clock.now()
        let bus = self.bus
        let users = self.users
        return try db.write { c -> Member in
            guard let r = try c.queryOne("SELECT * FROM members WHERE id = ? AND conversation_id = ?", [.text(memberID), .text(conversationID)]) else {
                throw PlatformError.notFound("member")
            }
            let user = try users.user(on: c, id: r.string("user_id") ?? "")
            var m = Self.member(r, user: user)
            guard m.state != .left else { throw MemberStateError(detail: "The member has already left.") }
            m.state = .left
            m.leftAt = now
            m.media = MemberMedia()
            try c.execute("UPDATE members SET state = 'LEFT', left_at = ?, media = ? WHERE id = ?",
                          [.int(now.millis), .text(JSONText.encode(m.media.json)), .text(m.id)])
            let remaining = try c.queryOne("SELECT COUNT(*) AS n FROM members WHERE conversation_id = ? AND state = 'JOINED'",
                                           [.text(conversationID)])?.int("n") ?? 0
            if remaining == 0 {
                try c.execute("UPDATE conversations SET empty_since = ? WHERE id = ?", [.int(now.millis), .text(conversationID)])
            }
            var body = Self.memberEventBody(m)
            if let reason, case .object(var o) = body { o["reason"] = ["text": .string(reason)]; body = .object(o) }
            _ = try Self.appendEvent(c, bus: bus, applicationID: applicationID, conversationID: conversationID, type: "member:left",
                                     from: m.id, body: body, subjectUserID: m.userID, now: now)
            return m
        }
    }

    /// Changes a member's audio settings; emits `member:media`.
    public func setMedia(memberID: String, conversationID: String, applicationID: String, media: MemberMedia) throws -> Member {
        _ = try get(id: conversationID, applicationID: applicationID)
        let now = clock.now()
        let bus = self.bus
        let users = self.users
        return try db.write { c -> Member in
            guard let r = try c.queryOne("SELECT * FROM members WHERE id = ? AND conversation_id = ?", [.text(memberID), .text(conversationID)]) else {
                throw PlatformError.notFound("member")
            }
            var m = Self.member(r, user: try users.user(on: c, id: r.string("user_id") ?? ""))
            guard m.state == .joined else { throw MemberStateError(detail: "Only a joined member has media.") }
            m.media = media
            try c.execute("UPDATE members SET media = ? WHERE id = ?", [.text(JSONText.encode(media.json)), .text(m.id)])
            _ = try Self.appendEvent(c, bus: bus, applicationID: applicationID, conversationID: conversationID, type: "member:media",
                                     from: m.id, body: ["media": media.json, "audio": .bool(media.enabled)], subjectUserID: m.userID, now: now)
            return m
        }
    }

    public func member(id: String, conversationID: String, applicationID: String) throws -> Member {
        _ = try get(id: conversationID, applicationID: applicationID)
        guard let r = try db.queryOne("SELECT * FROM members WHERE id = ? AND conversation_id = ?", [.text(id), .text(conversationID)]) else {
            throw PlatformError.notFound("member")
        }
        return Self.member(r, user: try users.get(id: r.string("user_id") ?? "", applicationID: applicationID))
    }

    /// The user's current (not LEFT) member of a conversation, else its latest one.
    ///
    /// The rows come newest first from the `members_by_conversation` index and the choice is made here: an
    /// `ORDER BY (state = 'LEFT')` would make SQLite sort them in a temporary b-tree, whose page cache
    /// (87 KB) is allocated and freed on every call.
    public func member(ofUser userID: String, conversationID: String) throws -> Member? {
        let rows = try db.query("SELECT * FROM members WHERE conversation_id = ? AND user_id = ? ORDER BY seq DESC",
                                [.text(conversationID), .text(userID)])
        return (rows.first { $0.string("state") != MemberState.left.rawValue } ?? rows.first).map { Self.member($0, user: nil) }
    }

    public func members(conversationID: String, applicationID: String, page: PageRequest) throws -> Page<Member> {
        _ = try get(id: conversationID, applicationID: applicationID)
        let s = page.sql
        var b: [SQLValue] = [.text(conversationID)]
        if let x = s.binding { b.append(.int(x)) }
        b.append(.int(Int64(page.pageSize + 1)))
        let rows = try db.query("""
            SELECT m.*, u.name AS user_name, u.display_name AS user_display_name FROM members m
            LEFT JOIN users u ON u.id = m.user_id
            WHERE m.conversation_id = ? AND \(s.condition.replacingOccurrences(of: "seq", with: "m.seq")) ORDER BY m.seq \(s.orderBy) LIMIT ?
            """, b)
        return Page.make(rows: rows.map { ($0.int64("seq") ?? 0, Self.member($0, user: nil)) }, request: page)
    }

    /// Joined members whose audio is on: after a restart, the ones that were live in a room when the
    /// process stopped (their connections are gone with it).
    public func joinedMembersWithAudio() throws -> [(member: Member, applicationID: String)] {
        try db.query("""
            SELECT m.*, c.application_id AS application_id FROM members m JOIN conversations c ON c.id = m.conversation_id
            WHERE m.state = 'JOINED' ORDER BY m.seq
            """).compactMap { r in
            let m = Self.member(r, user: nil)
            guard m.media.enabled, let app = r.string("application_id") else { return nil }
            return (m, app)
        }
    }

    /// Conversations a user is currently in (joined or invited), for the realtime gateway.
    ///
    /// `+state` keeps the state test off the index (an IN list on an indexed column, like DISTINCT, makes SQLite
    /// build a temporary b-tree with its 87 KB page cache on every call): the user's members are few.
    public func activeConversationIDs(userID: String) throws -> [String] {
        try db.query("SELECT conversation_id FROM members WHERE user_id = ? AND +state IN ('JOINED','INVITED')", [.text(userID)])
            .compactMap { $0.string("conversation_id") }.uniqued()
    }

    // MARK: Events

    /// Posts an event `from` a joined member. `fromLeftMember` lets the server close what a member left behind
    /// (its `audio:speaking:off` after it left mid-word); clients never get that.
    public func postEvent(conversationID: String, applicationID: String, type: String, from: String?, body: JSONValue,
                          fromLeftMember: Bool = false) throws -> ConversationEvent {
        guard ConversationEvent.isPostable(type) else {
            throw PlatformError.invalid("Events of type '\(type)' cannot be posted; use text, message, custom:*, audio:* or ephemeral.")
        }
        _ = try get(id: conversationID, applicationID: applicationID)
        let now = clock.now()
        let bus = self.bus
        return try db.write { c -> ConversationEvent in
            if let from {
                guard let r = try c.queryOne("SELECT state FROM members WHERE id = ? AND conversation_id = ?", [.text(from), .text(conversationID)]) else {
                    throw PlatformError.invalid("from must be a member of this conversation.")
                }
                guard r.string("state") == "JOINED" || fromLeftMember else {
                    throw MemberStateError(detail: "Only a joined member can post events.")
                }
            }
            return try Self.appendEvent(c, bus: bus, applicationID: applicationID, conversationID: conversationID, type: type,
                                        from: from, body: body, subjectUserID: nil, now: now)
        }
    }

    public func events(conversationID: String, applicationID: String, page: PageRequest, afterID: Int64? = nil, type: String? = nil) throws -> Page<ConversationEvent> {
        let conv = try get(id: conversationID, applicationID: applicationID)
        let s = page.sql
        var sql = "SELECT * FROM events WHERE conversation_id = ? AND deleted_at IS NULL"
        var b: [SQLValue] = [.text(conversationID)]
        if let afterID { sql += " AND seq > ?"; b.append(.int(afterID)) }
        if let type { sql += " AND type = ?"; b.append(.text(type)) }
        sql += " AND \(s.condition) ORDER BY seq \(s.orderBy) LIMIT ?"
        if let x = s.binding { b.append(.int(x)) }
        b.append(.int(Int64(page.pageSize + 1)))
        let rows = try db.query(sql, b).map { ($0.int64("seq") ?? 0, Self.event($0, applicationID: conv.applicationID)) }
        return Page.make(rows: rows, request: page)
    }

    /// Events after `afterID`, oldest first, at most `limit` (replay for resumed sessions).
    public func events(conversationID: String, after afterID: Int64, limit: Int) throws -> [ConversationEvent] {
        guard let conv = try db.queryOne("SELECT application_id FROM conversations WHERE id = ?", [.text(conversationID)]) else { return [] }
        let app = conv.string("application_id") ?? ""
        return try db.query("SELECT * FROM events WHERE conversation_id = ? AND seq > ? AND deleted_at IS NULL ORDER BY seq LIMIT ?",
                            [.text(conversationID), .int(afterID), .int(Int64(limit))]).map { Self.event($0, applicationID: app) }
    }

    public func event(id: Int64, conversationID: String, applicationID: String) throws -> ConversationEvent {
        _ = try get(id: conversationID, applicationID: applicationID)
        guard let r = try db.queryOne("SELECT * FROM events WHERE conversation_id = ? AND seq = ? AND deleted_at IS NULL",
                                      [.text(conversationID), .int(id)]) else { throw PlatformError.notFound("event") }
        return Self.event(r, applicationID: applicationID)
    }

    public func deleteEvent(id: Int64, conversationID: String, applicationID: String) throws {
        _ = try event(id: id, conversationID: conversationID, applicationID: applicationID)
        try db.execute("UPDATE events SET deleted_at = ? WHERE conversation_id = ? AND seq = ?", [.int(clock.now().millis), .text(conversationID), .int(id)])
    }

    /// Stores the next event of a conversation inside the caller's transaction and publishes it once that
    /// transaction commits (never an event that was rolled back), still under the writer lock, so ids and
    /// publication order agree.
    static func appendEvent(_ c: any SQLConnection, bus: any ConversationEventBus, applicationID: String, conversationID: String, type: String, from: String?,
                            body: JSONValue, subjectUserID: String?, now: Date) throws -> ConversationEvent {
        try c.execute("UPDATE conversations SET last_event_id = last_event_id + 1, updated_at = ? WHERE id = ?", [.int(now.millis), .text(conversationID)])
        let id = try c.queryOne("SELECT last_event_id FROM conversations WHERE id = ?", [.text(conversationID)])?.int64("last_event_id") ?? 1
        try c.execute("INSERT INTO events (conversation_id, seq, type, from_member, body, timestamp) VALUES (?, ?, ?, ?, ?, ?)",
                      [.text(conversationID), .int(id), .text(type), SQLValue(from), .text(JSONText.encode(body)), .int(now.millis)])
        let event = ConversationEvent(conversationID: conversationID, id: id, type: type, from: from, body: body, timestamp: now,
                                      applicationID: applicationID, subjectUserID: subjectUserID)
        // Without DISTINCT: SQLite would build a temporary b-tree (and allocate its 87 KB page cache) for every event.
        var recipients = try c.query("SELECT user_id FROM members WHERE conversation_id = ? AND state IN ('JOINED','INVITED')",
                                     [.text(conversationID)]).compactMap { $0.string("user_id") }.uniqued()
        if let s = subjectUserID, !recipients.contains(s) { recipients.append(s) }
        c.onCommit { bus.publish(event, recipients: recipients) }
        return event
    }

    static func memberEventBody(_ m: Member) -> JSONValue {
        [
            "member_id": .string(m.id), "user": ["id": .string(m.userID), "name": .string(m.userName),
                                                 "display_name": m.userDisplayName.map(JSONValue.string) ?? .null],
            "state": .string(m.state.rawValue), "channel": m.channel, "media": m.media.json,
            "timestamp": [
                "invited": m.invitedAt.map { .string($0.iso8601) } ?? .null,
                "joined": m.joinedAt.map { .string($0.iso8601) } ?? .null,
                "left": m.leftAt.map { .string($0.iso8601) } ?? .null,
            ],
        ]
    }

    static func conversation(_ r: Row) -> Conversation {
        Conversation(id: r.string("id") ?? "", applicationID: r.string("application_id") ?? "", name: r.string("name") ?? "",
                     displayName: r.string("display_name"), imageURL: r.string("image_url"),
                     properties: JSONText.decode(r.string("properties")), ttl: r.int("ttl"), state: r.string("state") ?? "ACTIVE",
                     lastEventID: r.int64("last_event_id") ?? 0, createdAt: Date(millis: r.int64("created_at") ?? 0),
                     updatedAt: Date(millis: r.int64("updated_at") ?? 0))
    }

    static func member(_ r: Row, user: User?) -> Member {
        Member(id: r.string("id") ?? "", conversationID: r.string("conversation_id") ?? "", userID: r.string("user_id") ?? "",
               userName: user?.name ?? r.string("user_name") ?? "", userDisplayName: user?.displayName ?? r.string("user_display_name"),
               state: MemberState(wire: r.string("state") ?? "") ?? .left, channel: JSONText.decode(r.string("channel")),
               media: MemberMedia(json: JSONText.decode(r.string("media"))), initiator: JSONText.decode(r.string("initiator")),
               invitedAt: r.int64("invited_at").map(Date.init(millis:)), joinedAt: r.int64("joined_at").map(Date.init(millis:)),
               leftAt: r.int64("left_at").map(Date.init(millis:)))
    }

    static func event(_ r: Row, applicationID: String) -> ConversationEvent {
        ConversationEvent(conversationID: r.string("conversation_id") ?? "", id: r.int64("seq") ?? 0, type: r.string("type") ?? "",
                          from: r.string("from_member"), body: JSONText.decode(r.string("body")),
                          timestamp: Date(millis: r.int64("timestamp") ?? 0), applicationID: applicationID, subjectUserID: nil)
    }
}

/// A change the member's current state does not allow (leaving twice, posting after leaving).
public struct MemberStateError: Error, Sendable {
    public var detail: String
}

extension Users {
    /// Reads a user on a connection already held by a transaction.
    func user(on c: any SQLConnection, id: String) throws -> User? {
        try c.queryOne("SELECT * FROM users WHERE id = ?", [.text(id)]).map(Self.user)
    }
}
