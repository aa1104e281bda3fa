import Foundation
import Media
import Platform
import Runtime
import Wire

/// Wires `RoomMedia` to the server: `rtc:*` messages on the realtime gateway, socket closes,
/// conversation events (a member leaving or disabling media elsewhere) and the engine's
/// audio levels. Message shapes are documented in docs/protocol.md, "Media (rtc:*)".
final class RoomMediaSignaling: ConversationEventSink, Sendable {
    let media: RoomMedia

    init(engine: MediaEngine, events: MediaEventHub, gateway: RealtimeGateway, core: PlatformCore, settings: RoomMediaSettings) {
        media = RoomMedia(
            engine: engine, conversations: core.conversations, settings: settings,
            send: { [weak gateway] ws, type, body in gateway?.send(ws, type: type, rid: nil, body: body) },
            isConnected: { [weak gateway] user in (gateway?.connectedSessionCount(userID: user) ?? 0) > 0 })
        let media = self.media
        gateway.handle(prefix: "rtc:") { context, message in
            try await Self.handle(media, context, message)
        }
        gateway.onSocketClosed { ws in Task { await media.socketClosed(ws) } }
        core.conversations.bus.add(self)
        events.subscribe { event in
            if case .audioLevels(let router, let levels) = event { Task { await media.levels(router: router, levels) } }
        }
        Metrics.shared.gauge("switchboard_room_media_peers", help: "Sockets with audio in conversations.") { [media] in
            Double(media.counts.withLock { $0.peers })
        }
        Metrics.shared.gauge("switchboard_room_media_transports", help: "Transports of audio in conversations.") { [media] in
            Double(media.counts.withLock { $0.transports })
        }
    }

    static func handle(_ media: RoomMedia, _ context: RealtimeContext, _ message: JSONValue) async throws -> JSONValue? {
        let type = message["type"]?.stringValue ?? ""
        let body = message["body"] ?? .object([:])
        guard let conversationID = body["conversation_id"]?.stringValue, !conversationID.isEmpty else {
            throw APIError.badRequest("body.conversation_id is required.", code: "missing-conversation")
        }
        let user = context.user
        let app = context.application.id
        let ws = context.socket
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
            let member = try await media.join(user: user, applicationID: app, conversationID: conversationID)
            return ["member_id": .string(member.id), "state": .string(member.state.rawValue)]
        case "rtc:publish":
            return try await media.publish(user: user, applicationID: app, socket: ws, conversationID: conversationID, offer: try text("offer"))
        case "rtc:subscribe":
            return try await media.subscribe(user: user, applicationID: app, socket: ws, conversationID: conversationID)
        case "rtc:answer":
            return try await media.answer(socket: ws, conversationID: conversationID, answer: try text("answer"))
        case "rtc:mute":
            return try await media.mute(user: user, applicationID: app, socket: ws, conversationID: conversationID, muted: try flag("muted"))
        case "rtc:earmuff":
            return try await media.earmuff(user: user, applicationID: app, socket: ws, conversationID: conversationID,
                                           earmuffed: try flag("earmuffed"))
        case "rtc:unpublish":
            return try await media.unpublish(user: user, applicationID: app, socket: ws, conversationID: conversationID)
        default:
            throw APIError.badRequest("Unknown message type '\(type)'.", code: "unknownType")
        }
    }

    /// Runs under the store's writer lock: only hands the event on.
    func deliver(_ event: ConversationEvent, recipients: [String]) {
        let gone: Bool
        switch event.type {
        case "member:left": gone = true
        case "member:media": gone = event.body["audio"]?.boolValue == false
        default: gone = false
        }
        guard gone, let member = event.from ?? event.body["member_id"]?.stringValue else { return }
        let media = self.media
        let conversation = event.conversationID
        let left = event.type == "member:left"
        Task { await media.memberGone(conversationID: conversation, memberID: member, left: left) }
    }
}
