import Foundation
import Live
import Platform
import Runtime
import Wire

/// `video:*` messages on the realtime gateway (docs/protocol.md, "Video sessions"), translated into
/// calls on Live's `VideoHub`.
struct VideoSignaling {
    let hub: VideoHub
    let clients: RealtimeClients
    /// Sent to each connection (`iceServers`) for its peer connections.
    let iceServers: ICEServers

    func register(on gateway: RealtimeGateway) {
        let hub = self.hub
        gateway.handleAnonymous(prefix: "video:") { [self, weak gateway] ws, msg in
            let client = clients.client(ws)
            let reply = try await answeringLiveErrors { try await handle(client, msg) }
            // A socket connected to a video session has authenticated with its video token.
            if hub.connection(for: client) != nil { gateway?.admit(ws) }
            return reply
        }
        gateway.onSocketClosed { ws in hub.disconnect(client: RealtimeClients.id(ws), reason: .networkDisconnected) }
    }

    func handle(_ client: ClientID, _ msg: JSONValue) async throws -> JSONValue? {
        let type = msg["type"]?.stringValue ?? ""
        let body = msg["body"] ?? .object([:])
        if type == "video:connect" { return try connect(client, body) }
        let me = try hub.caller(client)
        switch type {
        case "video:publish":
            let (stream, answer) = try await hub.publish(
                from: me, name: body["name"]?.stringValue ?? "", hasAudio: body["hasAudio"]?.boolValue ?? true,
                hasVideo: body["hasVideo"]?.boolValue ?? true, videoType: VideoHub.VideoType(wire: body["videoType"]?.stringValue),
                publishCaptions: body["publishCaptions"]?.boolValue ?? false, audioFallback: try Self.audioFallback(body),
                offer: body["offer"]?.stringValue)
            var reply: [String: JSONValue] = ["streamId": .string(stream.id), "stream": stream.json]
            if let answer { reply["answer"] = .string(answer) }
            return .object(reply)
        case "video:unpublish":
            try hub.unpublish(from: me, streamID: body["streamId"]?.stringValue)
            return .object([:])
        case "video:subscribe":
            let preferences = try Self.preferences(body)
            let (streamID, offer) = try await hub.subscribe(from: me, streamID: body["streamId"]?.stringValue)
            if !preferences.isEmpty, offer != nil { try await hub.setPreferences(from: me, streamID: streamID, preferences) }
            var reply: [String: JSONValue] = ["streamId": .string(streamID), "subscriberId": .string(me.id)]
            if let offer { reply["offer"] = .string(offer) } else { reply["relayed"] = .bool(true) }
            return .object(reply)
        case "video:subscribe:answer":
            guard let streamID = body["streamId"]?.stringValue, let answer = body["answer"]?.stringValue else {
                throw VideoError(code: "notFound", detail: "streamId and answer are required.")
            }
            try await hub.answerSubscription(from: me, streamID: streamID, answer: answer)
            return .object([:])
        case "video:subscriberPreferences":
            let preferences = try Self.preferences(body)
            guard let streamID = body["streamId"]?.stringValue, !preferences.isEmpty else {
                throw VideoError(code: "invalidPreference", detail: "streamId and preferredResolution ({width, height} or null), "
                                 + "preferredFrameRate (1–60 or null), subscribeToAudio, subscribeToVideo or audioFallback (true or false) are required.")
            }
            try await hub.setPreferences(from: me, streamID: streamID, preferences)
            return .object([:])
        case "video:relay":
            try hub.relay(from: me, streamID: body["streamId"]?.stringValue, subscriberID: body["subscriberId"]?.stringValue, try Self.relayMessage(body))
            return .object([:])
        case "video:unsubscribe":
            if let streamID = body["streamId"]?.stringValue { await hub.unsubscribe(from: me, streamID: streamID) }
            return .object([:])
        case "video:streamProperty":
            // The publisher's own audio/video switch: {streamId, hasAudio?, hasVideo?}.
            try hub.setProperties(from: me, streamID: body["streamId"]?.stringValue,
                                  hasAudio: body["hasAudio"]?.boolValue, hasVideo: body["hasVideo"]?.boolValue)
            return .object([:])
        case "video:publishCaptions":
            try hub.setPublishCaptions(from: me, streamID: body["streamId"]?.stringValue, body["publishCaptions"]?.boolValue ?? true)
            return .object([:])
        case "video:subscribeToCaptions":
            try hub.subscribeToCaptions(from: me, streamID: body["streamId"]?.stringValue, body["subscribe"]?.boolValue ?? true)
            return .object([:])
        case "video:signal":
            try hub.signal(from: me, to: body["to"]?.stringValue, type: body["type"]?.stringValue ?? "", data: body["data"]?.stringValue ?? "")
            return .object([:])
        case "video:forceDisconnect":
            try hub.forceDisconnect(by: me, connectionID: body["connectionId"]?.stringValue)
            return .object([:])
        case "video:forceMute":
            try hub.forceMute(by: me, streamID: body["streamId"]?.stringValue)
            return .object([:])
        case "video:disconnect":
            hub.disconnect(client: client, reason: .clientDisconnected)
            return .object([:])
        default:
            throw VideoError(code: "unknownType", detail: "Unknown message type '\(type)'.")
        }
    }

    /// A publish request's `audioFallback`: `{publisher, subscriber}`, booleans, each optional (publisher off and
    /// subscriber on unless said).
    static func audioFallback(_ body: JSONValue) throws -> AudioFallbackSettings {
        var settings = AudioFallbackSettings()
        guard let value = body["audioFallback"], value != .null else { return settings }
        let bad = VideoError(code: "invalidAudioFallback", detail: "audioFallback is {publisher, subscriber}, each true or false.")
        guard case .object(let fields) = value, Set(fields.keys).isSubset(of: ["publisher", "subscriber"]) else { throw bad }
        for (key, on) in fields {
            guard case .bool(let on) = on else { throw bad }
            if key == "publisher" { settings.publisher = on } else { settings.subscriber = on }
        }
        return settings
    }

    /// A request's `preferredResolution` (`{width, height}` in pixels, 1–8192 each, or null for the largest: 0 × 0),
    /// `preferredFrameRate` (frames per second, 1–60, or null for every frame: 0), `subscribeToAudio`,
    /// `subscribeToVideo` and `audioFallback` (booleans); what it leaves out stays as it was.
    static func preferences(_ body: JSONValue) throws -> SubscriberPreferences {
        var preferences = SubscriberPreferences()
        for (key, kind) in [("subscribeToAudio", \SubscriberPreferences.audio), ("subscribeToVideo", \SubscriberPreferences.video),
                            ("audioFallback", \SubscriberPreferences.audioFallback)] {
            guard let value = body[key] else { continue }
            guard case .bool(let on) = value else { throw VideoError(code: "invalidPreference", detail: "\(key) is true or false.") }
            preferences[keyPath: kind] = on
        }
        if let value = body["preferredResolution"] {
            if value == .null {
                (preferences.width, preferences.height) = (0, 0)
            } else {
                guard let width = value["width"]?.intValue, let height = value["height"]?.intValue,
                      (1...8192).contains(width), (1...8192).contains(height) else {
                    throw VideoError(code: "invalidPreference", detail: "preferredResolution is {width, height}, each 1–8192 pixels, or null.")
                }
                (preferences.width, preferences.height) = (width, height)
            }
        }
        if let value = body["preferredFrameRate"] {
            if value == .null {
                preferences.frameRate = 0
            } else {
                guard let rate = value.doubleValue, rate >= 1, rate <= 60 else {
                    throw VideoError(code: "invalidPreference", detail: "preferredFrameRate is 1–60 frames per second, or null.")
                }
                preferences.frameRate = rate
            }
        }
        return preferences
    }

    /// The description or candidate of a `video:relay` request, as `RTCSessionDescriptionInit` and
    /// `RTCIceCandidateInit` write them.
    static func relayMessage(_ body: JSONValue) throws(LiveError) -> VideoHub.RelayMessage {
        if let d = body["description"], body["candidate"] == nil, let type = d["type"]?.stringValue {
            return .description(type: type, sdp: d["sdp"]?.stringValue ?? "")
        }
        if let c = body["candidate"], body["description"] == nil, let candidate = c["candidate"]?.stringValue {
            let index = c["sdpMLineIndex"].flatMap { $0 == .null ? nil : $0 }
            if let index { guard let i = index.intValue, (0..<1024).contains(i) else { throw .invalidRelay } }
            return .candidate(candidate: candidate, sdpMid: c["sdpMid"]?.stringValue, sdpMLineIndex: index?.intValue)
        }
        throw .invalidRelay
    }

    func connect(_ client: ClientID, _ body: JSONValue) throws -> JSONValue {
        guard let sid = body["sessionId"]?.stringValue, let token = body["token"]?.stringValue else {
            throw VideoError(code: "invalidToken", detail: "sessionId and token are required.")
        }
        let (c, others, streams) = try hub.connect(client: client, sessionID: sid, token: token)
        let role = c.grant.role
        return [
            "connectionId": .string(c.id), "sessionId": .string(sid), "connection": c.json, "mediaMode": .string(c.relayed ? "relayed" : "routed"),
            "connections": .array(others.map(\.json)), "streams": .array(streams.map(\.json)), "iceServers": iceServers.forClient(c.id),
            "capabilities": ["publish": .bool(role.canPublish), "subscribe": .bool(role.canSubscribe),
                             "forceDisconnect": .bool(role.canModerate), "forceMute": .bool(role.canModerate)],
        ]
    }
}
