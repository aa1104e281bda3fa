import Foundation
import Live
import Platform
import Runtime
import Wire

/// `rtc:*` messages on the realtime gateway, translated into calls on Live's `Rooms`; socket closes
/// and conversation events (a member leaving or disabling media elsewhere) are handed on to it.
/// Message shapes are documented in docs/protocol.md, "Media (rtc:*)".
struct RoomSignaling {
    let rooms: Rooms
    let clients: RealtimeClients

    func register(on gateway: RealtimeGateway, bus: any ConversationEventBus) {
        let rooms = self.rooms
        let clients = self.clients
        gateway.handle(prefix: "rtc:") { context, message in
            try await answeringLiveErrors { try await Self.handle(rooms, clients.client(context.socket), context, message) }
        }
        gateway.onSocketClosed { ws in Task { await rooms.clientClosed(RealtimeClients.id(ws)) } }
        bus.add(rooms)
        Metrics.shared.gauge("switchboard_room_media_peers", help: "Sockets with audio in conversations.") {
            Double(rooms.counts.peers)
        }
        Metrics.shared.gauge("switchboard_room_media_transports", help: "Transports of audio in conversations.") {
            Double(rooms.counts.transports)
        }
    }

    static func handle(_ rooms: Rooms, _ client: ClientID, _ context: RealtimeContext, _ message: JSONValue) async throws -> JSONValue? {
        let type = message["type"]?.stringValue ?? ""
        let body = message["body"] ?? .object([:])
        guard let conversationID = body["conversation_id"]?.stringValue, !conversationID.isEmpty else {
            throw APIError.badRequest("body.conversation_id is required.", code: "missing-conversation")
        }
        let user = context.user
        let app = context.application.id
        func text(_ key: String) throws -> String {
            guard let value = body[key]?.stringValue, !value.isEmpty else {
                throw APIError.badRequest("body.\(key) is required.", code: "missing-\(key)")
            }
            return value
        }
        func flag(_ key: String) throws -> Bool {
            guard let value = body[key]?.boolValue else { throw APIError.badRequest("body.\(key) must be true or false.", code: "missing-\(key)") }
            return value
        }
        switch type {
        case "rtc:join":
            let member = try await rooms.join(user: user, applicationID: app, conversationID: conversationID)
            return ["member_id": .string(member.id), "state": .string(member.state.rawValue)]
        case "rtc:publish":
            let published = try await rooms.publish(user: user, applicationID: app, client: client, conversationID: conversationID,
                                                    offer: try text("offer"))
            return ["answer": .string(published.answer), "producer_id": .string(published.producerID.rawValue),
                    "member_id": .string(published.memberID)]
        case "rtc:subscribe":
            let offer = try await rooms.subscribe(user: user, applicationID: app, client: client, conversationID: conversationID)
            return ["offer": offer.offer.map(JSONValue.string) ?? .null, "tracks": offer.tracks.json]
        case "rtc:answer":
            try await rooms.answer(client: client, conversationID: conversationID, answer: try text("answer"))
            return [:]
        case "rtc:mute":
            let muted = try flag("muted")
            try await rooms.mute(user: user, applicationID: app, client: client, conversationID: conversationID, muted: muted)
            return ["muted": .bool(muted)]
        case "rtc:earmuff":
            let earmuffed = try flag("earmuffed")
            try await rooms.earmuff(user: user, applicationID: app, client: client, conversationID: conversationID, earmuffed: earmuffed)
            return ["earmuffed": .bool(earmuffed)]
        case "rtc:unpublish":
            try await rooms.unpublish(user: user, applicationID: app, client: client, conversationID: conversationID)
            return [:]
        default:
            throw APIError.badRequest("Unknown message type '\(type)'.", code: "unknownType")
        }
    }
}
