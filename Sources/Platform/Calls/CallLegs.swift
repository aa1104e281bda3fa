import Crypto
import Foundation
import Store
import Wire

/// Call legs in the store. Every leg is a member of a conversation; each change of status is stored with
/// its `leg:status:update` event (and `member:invited`, `member:joined`, `member:left` as the member
/// follows the leg), so the Conversation API and realtime clients see calls as they happen.
public final class CallLegs: Sendable {
    let db: any SQLStore
    let clock: any WallClock
    let conversations: Conversations

    init(db: any SQLStore, clock: any WallClock, conversations: Conversations) {
        self.db = db
        self.clock = clock
        self.conversations = conversations
    }

    /// What a new leg is made of.
    public struct NewLeg: Sendable {
        public var applicationID: String
        public var direction: CallDirection
        public var from: CallEndpoint
        public var to: CallEndpoint
        /// The conversation to put the leg in; nil makes a new one.
        public var conversationID: String?
        public var parentUUID: String?
        public var ringingTimer: Int
        public var lengthTimer: Int
        /// The application user behind the leg's far end (an `app` channel), when there is one.
        public var user: User?

        public init(applicationID: String, direction: CallDirection, from: CallEndpoint, to: CallEndpoint, conversationID: String? = nil,
                    parentUUID: String? = nil, ringingTimer: Int = 60, lengthTimer: Int = 7200, user: User? = nil) {
            self.applicationID = applicationID
            self.direction = direction
            self.from = from
            self.to = to
            self.conversationID = conversationID
            self.parentUUID = parentUUID
            self.ringingTimer = ringingTimer
            self.lengthTimer = lengthTimer
            self.user = user
        }
    }

    /// Stores a leg in status `started` with its member (invited) and events; durable once this returns.
    public func create(_ new: NewLeg) throws -> CallLeg {
        let conversationID: String
        if let given = new.conversationID {
            conversationID = try conversations.get(id: given, applicationID: new.applicationID).id
        } else {
            conversationID = try conversations.create(applicationID: new.applicationID, input: ResourceInput()).id
        }
        let now = clock.now()
        var leg = CallLeg(uuid: UUID4.generate(), applicationID: new.applicationID, conversationID: conversationID,
                          memberID: "MEM-" + UUID4.generate(), parentUUID: new.parentUUID, direction: new.direction, from: new.from, to: new.to,
                          status: .started, network: nil, ringingTimer: new.ringingTimer, lengthTimer: new.lengthTimer, startTime: now)
        let bus = conversations.bus
        try db.write { c in
            try c.execute("""
                INSERT INTO calls (uuid, application_id, conversation_id, member_id, parent_uuid, direction, from_endpoint, to_endpoint,
                                   status, ringing_timer, length_timer, start_time)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(leg.uuid), .text(leg.applicationID), .text(conversationID), .text(leg.memberID), SQLValue(leg.parentUUID),
                      .text(leg.direction.rawValue), .text(JSONText.encode(leg.from.shown)), .text(JSONText.encode(leg.to.shown)),
                      .text(leg.status.rawValue), .int(Int64(leg.ringingTimer)), .int(Int64(leg.lengthTimer)), .int(now.millis)])
            try Self.addMember(c, bus: bus, leg: leg, user: new.user, state: .invited, now: now)
            try Self.statusEvent(c, bus: bus, leg: leg, now: now)
        }
        leg.seq = try db.queryOne("SELECT seq FROM calls WHERE uuid = ?", [.text(leg.uuid)])?.int64("seq") ?? 0
        return leg
    }

    /// Moves a leg to `status`; nil when that changes nothing (the leg has ended, or is already past it).
    /// `answered` joins the leg's member; a terminal status makes it leave.
    @discardableResult
    public func setStatus(uuid: String, _ status: CallStatus, network: String? = nil) throws -> CallLeg? {
        let now = clock.now()
        let bus = conversations.bus
        return try db.write { c -> CallLeg? in
            guard let row = try c.queryOne("SELECT * FROM calls WHERE uuid = ?", [.text(uuid)]) else { throw PlatformError.notFound("call") }
            var leg = Self.leg(row)
            guard !leg.status.isTerminal, leg.status != status else { return nil }
            if !status.isTerminal, Self.rank(status) < Self.rank(leg.status) { return nil }
            leg.status = status
            if let network { leg.network = network }
            if status == .answered { leg.answeredAt = now }
            if status.isTerminal { leg.endTime = now }
            try c.execute("UPDATE calls SET status = ?, network = ?, answered_at = ?, end_time = ? WHERE uuid = ?",
                          [.text(status.rawValue), SQLValue(leg.network), SQLValue(leg.answeredAt.map(\.millis)), SQLValue(leg.endTime.map(\.millis)),
                           .text(uuid)])
            if status == .answered {
                try Self.memberState(c, bus: bus, leg: leg, .joined, now: now)
            } else if status.isTerminal {
                try Self.memberState(c, bus: bus, leg: leg, .left, now: now)
            }
            try Self.statusEvent(c, bus: bus, leg: leg, now: now)
            return leg
        }
    }

    /// Moves an answered leg into another conversation of its application (the NCCO `conversation` action):
    /// its member leaves the old conversation and a new member joins the other one.
    public func move(uuid: String, to conversationID: String, user: User? = nil) throws -> CallLeg {
        let now = clock.now()
        let bus = conversations.bus
        return try db.write { c -> CallLeg in
            guard let row = try c.queryOne("SELECT * FROM calls WHERE uuid = ?", [.text(uuid)]) else { throw PlatformError.notFound("call") }
            var leg = Self.leg(row)
            guard leg.conversationID != conversationID else { return leg }
            try Self.memberState(c, bus: bus, leg: leg, .left, now: now)
            leg.conversationID = conversationID
            leg.memberID = "MEM-" + UUID4.generate()
            try c.execute("UPDATE calls SET conversation_id = ?, member_id = ? WHERE uuid = ?", [.text(conversationID), .text(leg.memberID), .text(uuid)])
            try Self.addMember(c, bus: bus, leg: leg, user: user, state: .joined, now: now)
            return leg
        }
    }

    public func get(uuid: String) throws -> CallLeg? {
        try db.queryOne("SELECT * FROM calls WHERE uuid = ?", [.text(uuid)]).map(Self.leg)
    }

    /// The leg only if it belongs to the application: other applications' legs do not exist for it.
    public func get(uuid: String, applicationID: String) throws -> CallLeg {
        guard let leg = try get(uuid: uuid), leg.applicationID == applicationID else { throw PlatformError.notFound("call") }
        return leg
    }

    /// Legs in a conversation, oldest first.
    public func legs(inConversation conversationID: String) throws -> [CallLeg] {
        try db.query("SELECT * FROM calls WHERE conversation_id = ? ORDER BY seq", [.text(conversationID)]).map(Self.leg)
    }

    /// `GET /v1/calls` filters and paging (`record_index` is an offset).
    public struct Filter: Sendable {
        public var status: CallStatus?
        public var dateStart: Date?
        public var dateEnd: Date?
        public var conversationID: String?
        public var pageSize = 10
        public var recordIndex = 0
        public var ascending = true
        public init() {}
    }

    /// One page of legs and how many match the filter in all.
    public func list(applicationID: String, filter: Filter) throws -> (legs: [CallLeg], count: Int) {
        var conditions = ["application_id = ?"]
        var b: [SQLValue] = [.text(applicationID)]
        if let s = filter.status { conditions.append("status = ?"); b.append(.text(s.rawValue)) }
        if let d = filter.dateStart { conditions.append("start_time >= ?"); b.append(.int(d.millis)) }
        if let d = filter.dateEnd { conditions.append("start_time <= ?"); b.append(.int(d.millis)) }
        if let cid = filter.conversationID { conditions.append("conversation_id = ?"); b.append(.text(cid)) }
        let whereClause = conditions.joined(separator: " AND ")
        let count = try db.queryOne("SELECT COUNT(*) AS n FROM calls WHERE \(whereClause)", b)?.int("n") ?? 0
        let rows = try db.query("SELECT * FROM calls WHERE \(whereClause) ORDER BY seq \(filter.ascending ? "ASC" : "DESC") LIMIT ? OFFSET ?",
                                b + [.int(Int64(filter.pageSize)), .int(Int64(filter.recordIndex))])
        return (rows.map(Self.leg), count)
    }

    /// Legs a previous run left unfinished: they cannot be running now, so they are marked `failed`.
    @discardableResult
    public func failInterrupted() throws -> [CallLeg] {
        let open = try db.query("SELECT uuid FROM calls WHERE status IN ('started','ringing','answered','machine')").compactMap { $0.string("uuid") }
        return try open.compactMap { try setStatus(uuid: $0, .failed) }
    }

    // MARK: Rows and events

    static func rank(_ s: CallStatus) -> Int {
        switch s {
        case .started: 0
        case .ringing: 1
        case .answered, .machine: 2
        default: 3
        }
    }

    static func addMember(_ c: any SQLConnection, bus: any ConversationEventBus, leg: CallLeg, user: User?, state: MemberState, now: Date) throws {
        let m = Member(id: leg.memberID, conversationID: leg.conversationID, userID: user?.id ?? "", userName: user?.name ?? leg.channelAddress,
                       userDisplayName: user?.displayName, state: state, channel: leg.channel, media: MemberMedia(enabled: true),
                       initiator: ["joined": ["is_system": true]], invitedAt: state == .invited ? now : nil,
                       joinedAt: state == .joined ? now : nil, leftAt: nil)
        try c.execute("""
            INSERT INTO members (id, conversation_id, user_id, state, channel, media, initiator, invited_at, joined_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            """, [.text(m.id), .text(m.conversationID), .text(m.userID), .text(state.rawValue), .text(JSONText.encode(m.channel)),
                  .text(JSONText.encode(m.media.json)), .text(JSONText.encode(m.initiator)), SQLValue(m.invitedAt.map(\.millis)),
                  SQLValue(m.joinedAt.map(\.millis))])
        if state == .joined { try c.execute("UPDATE conversations SET empty_since = NULL WHERE id = ?", [.text(m.conversationID)]) }
        _ = try Conversations.appendEvent(c, bus: bus, applicationID: leg.applicationID, conversationID: m.conversationID,
                                          type: state == .joined ? "member:joined" : "member:invited", from: m.id,
                                          body: Conversations.memberEventBody(m), subjectUserID: user?.id, now: now)
    }

    static func memberState(_ c: any SQLConnection, bus: any ConversationEventBus, leg: CallLeg, _ state: MemberState, now: Date) throws {
        guard let r = try c.queryOne("SELECT m.*, u.name AS user_name, u.display_name AS user_display_name FROM members m LEFT JOIN users u ON u.id = m.user_id WHERE m.id = ?",
                                     [.text(leg.memberID)]) else { return }
        var m = Conversations.member(r, user: nil)
        if m.userName.isEmpty { m.userName = leg.channelAddress }
        guard m.state != state, m.state != .left else { return }
        m.state = state
        if state == .joined { m.joinedAt = now } else { m.leftAt = now }
        try c.execute("UPDATE members SET state = ?, joined_at = ?, left_at = ? WHERE id = ?",
                      [.text(state.rawValue), SQLValue(m.joinedAt.map(\.millis)), SQLValue(m.leftAt.map(\.millis)), .text(m.id)])
        if state == .left {
            let remaining = try c.queryOne("SELECT COUNT(*) AS n FROM members WHERE conversation_id = ? AND state = 'JOINED'",
                                           [.text(m.conversationID)])?.int("n") ?? 0
            if remaining == 0 { try c.execute("UPDATE conversations SET empty_since = ? WHERE id = ?", [.int(now.millis), .text(m.conversationID)]) }
        } else {
            try c.execute("UPDATE conversations SET empty_since = NULL WHERE id = ?", [.text(m.conversationID)])
        }
        _ = try Conversations.appendEvent(c, bus: bus, applicationID: leg.applicationID, conversationID: m.conversationID,
                                          type: state == .joined ? "member:joined" : "member:left", from: m.id,
                                          body: Conversations.memberEventBody(m), subjectUserID: m.userID.isEmpty ? nil : m.userID, now: now)
    }

    static func statusEvent(_ c: any SQLConnection, bus: any ConversationEventBus, leg: CallLeg, now: Date) throws {
        let body: JSONValue = ["leg_id": .string(leg.uuid), "type": .string(leg.channelType.rawValue), "status": .string(leg.status.rawValue),
                               "direction": .string(leg.direction.rawValue), "conversation_id": .string(leg.conversationID),
                               "member_id": .string(leg.memberID)]
        _ = try Conversations.appendEvent(c, bus: bus, applicationID: leg.applicationID, conversationID: leg.conversationID,
                                          type: "leg:status:update", from: leg.memberID, body: body, subjectUserID: nil, now: now)
    }

    static func endpoint(_ text: String?) -> CallEndpoint {
        (try? CallEndpoint.parse(JSONText.decode(text), field: "endpoint")) ?? .phone(number: "", dtmfAnswer: nil)
    }

    static func leg(_ r: Row) -> CallLeg {
        CallLeg(uuid: r.string("uuid") ?? "", applicationID: r.string("application_id") ?? "", conversationID: r.string("conversation_id") ?? "",
                memberID: r.string("member_id") ?? "", parentUUID: r.string("parent_uuid"),
                direction: CallDirection(rawValue: r.string("direction") ?? "") ?? .outbound,
                from: endpoint(r.string("from_endpoint")), to: endpoint(r.string("to_endpoint")),
                status: CallStatus(rawValue: r.string("status") ?? "") ?? .failed, network: r.string("network"),
                ringingTimer: r.int("ringing_timer") ?? 60, lengthTimer: r.int("length_timer") ?? 7200,
                startTime: Date(millis: r.int64("start_time") ?? 0), answeredAt: r.int64("answered_at").map(Date.init(millis:)),
                endTime: r.int64("end_time").map(Date.init(millis:)), seq: r.int64("seq") ?? 0)
    }
}

extension CallLeg {
    /// The far end's address, the name a leg's member shows when no user is behind it.
    var channelAddress: String { (direction == .outbound ? to : from).address }
}
