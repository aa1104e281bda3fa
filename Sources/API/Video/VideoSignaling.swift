import Crypto
import Foundation
import Platform
import Runtime
import Wire

/// Errors of the video session protocol; `code` is what clients switch on.
struct VideoError: HTTPErrorConvertible, Sendable {
    var code: String
    var detail: String
    var status: Int { code == "sessionNotFound" || code == "notFound" ? 404 : 403 }
    var title: String { code }

    static let notConnected = VideoError(code: "notConnected", detail: "Send video:connect first.")
}

/// `video:*` messages on the realtime gateway (docs/protocol.md, "Video sessions").
struct VideoSignaling {
    let core: PlatformCore
    let hub: VideoHub
    let verifier: VideoTokenVerifier

    init(core: PlatformCore, hub: VideoHub) {
        self.core = core
        self.hub = hub
        verifier = VideoTokenVerifier(core: core)
    }

    func register(on gateway: RealtimeGateway) {
        let hub = self.hub
        gateway.handleAnonymous(prefix: "video:") { [self, weak gateway] ws, msg in
            let reply = try await handle(ws, msg)
            // A socket connected to a video session has authenticated with its video token.
            if hub.connection(for: ws) != nil { gateway?.admit(ws) }
            return reply
        }
        gateway.onSocketClosed { ws in hub.disconnect(socket: ws, reason: "networkDisconnected") }
    }

    func handle(_ ws: WebSocket, _ msg: JSONValue) async throws -> JSONValue? {
        let type = msg["type"]?.stringValue ?? ""
        let body = msg["body"] ?? .object([:])
        if type == "video:connect" { return try connect(ws, body) }
        guard let me = hub.connection(for: ws) else { throw VideoError.notConnected }
        if me.grant.expiresAt < Date() {
            hub.disconnect(socket: ws, reason: "forceDisconnected")
            throw VideoError(code: "tokenExpired", detail: "The token has expired.")
        }
        switch type {
        case "video:publish":
            guard me.grant.role.canPublish else {
                throw VideoError(code: "notAllowedToPublish", detail: "The token's role (\(me.grant.role.rawValue)) does not allow publishing.")
            }
            // Media first, so that subscribers reacting to streamCreated find the producers in place.
            let streamID = UUID4.generate()
            var answer: String?
            if let offer = body["offer"]?.stringValue, let bridge = hub.bridge {
                do {
                    answer = try await bridge.publish(sessionID: me.sessionID, streamID: streamID, offer: offer)
                } catch {
                    throw VideoError(code: "publishFailed", detail: "The media server refused the offer: \(error)")
                }
            }
            guard hub.connection(for: ws)?.id == me.id else {
                if let bridge = hub.bridge { await bridge.unpublish(sessionID: me.sessionID, streamID: streamID) }
                throw VideoError.notConnected
            }
            let stream = hub.publish(from: me, id: streamID, name: body["name"]?.stringValue ?? "", hasAudio: body["hasAudio"]?.boolValue ?? true,
                                     hasVideo: body["hasVideo"]?.boolValue ?? true, videoType: body["videoType"]?.stringValue ?? "camera")
            var reply: [String: JSONValue] = ["streamId": .string(stream.id), "stream": stream.json]
            if let answer { reply["answer"] = .string(answer) }
            return .object(reply)
        case "video:unpublish":
            guard let sid = body["streamId"]?.stringValue, let st = hub.stream(sessionID: me.sessionID, streamID: sid), st.connectionID == me.id else {
                throw VideoError(code: "notFound", detail: "No such stream of this connection.")
            }
            hub.unpublish(sessionID: me.sessionID, streamID: sid, reason: "clientDisconnected")
            return .object([:])
        case "video:subscribe":
            guard me.grant.role.canSubscribe else {
                throw VideoError(code: "notAllowedToSubscribe", detail: "The token's role does not allow subscribing.")
            }
            guard let sid = body["streamId"]?.stringValue, hub.stream(sessionID: me.sessionID, streamID: sid) != nil else {
                throw VideoError(code: "notFound", detail: "No such stream in this session.")
            }
            var reply: [String: JSONValue] = ["streamId": .string(sid), "subscriberId": .string(me.id)]
            if let bridge = hub.bridge {
                reply["offer"] = .string(try await bridge.subscribe(sessionID: me.sessionID, streamID: sid, subscriberID: me.id))
            }
            return .object(reply)
        case "video:subscribe:answer":
            guard let sid = body["streamId"]?.stringValue, let answer = body["answer"]?.stringValue, let bridge = hub.bridge else {
                throw VideoError(code: "notFound", detail: "streamId and answer are required.")
            }
            try await bridge.completeSubscription(sessionID: me.sessionID, streamID: sid, subscriberID: me.id, answer: answer)
            return .object([:])
        case "video:unsubscribe":
            if let sid = body["streamId"]?.stringValue, let bridge = hub.bridge {
                await bridge.unsubscribe(sessionID: me.sessionID, streamID: sid, subscriberID: me.id)
            }
            return .object([:])
        case "video:streamProperty":
            // The publisher's own audio/video switch: {streamId, hasAudio?, hasVideo?}.
            guard let sid = body["streamId"]?.stringValue, let st = hub.stream(sessionID: me.sessionID, streamID: sid), st.connectionID == me.id else {
                throw VideoError(code: "notFound", detail: "No such stream of this connection.")
            }
            for property in ["hasAudio", "hasVideo"] {
                if let value = body[property]?.boolValue { _ = hub.setProperty(sessionID: me.sessionID, streamID: sid, property: property, value: value) }
            }
            return .object([:])
        case "video:signal":
            let (sigType, data) = try Self.validateSignal(body)
            let ok = hub.signal(sessionID: me.sessionID, to: body["to"]?.stringValue, from: me.id, type: sigType, data: data)
            if !ok { throw VideoError(code: "notFound", detail: "No such connection in this session.") }
            return .object([:])
        case "video:forceDisconnect":
            guard me.grant.role.canModerate else { throw VideoError(code: "notAllowed", detail: "Only a moderator may force a disconnect.") }
            guard let cid = body["connectionId"]?.stringValue, hub.disconnect(sessionID: me.sessionID, connectionID: cid, reason: "forceDisconnected") else {
                throw VideoError(code: "notFound", detail: "No such connection in this session.")
            }
            return .object([:])
        case "video:forceMute":
            guard me.grant.role.canModerate else { throw VideoError(code: "notAllowed", detail: "Only a moderator may mute others.") }
            guard let sid = body["streamId"]?.stringValue, hub.mute(sessionID: me.sessionID, streamID: sid) else {
                throw VideoError(code: "notFound", detail: "No such stream in this session.")
            }
            return .object([:])
        case "video:disconnect":
            hub.disconnect(socket: ws, reason: "clientDisconnected")
            return .object([:])
        default:
            throw VideoError(code: "unknownType", detail: "Unknown message type '\(type)'.")
        }
    }

    func connect(_ ws: WebSocket, _ body: JSONValue) throws -> JSONValue {
        guard let sid = body["sessionId"]?.stringValue, let token = body["token"]?.stringValue else {
            throw VideoError(code: "invalidToken", detail: "sessionId and token are required.")
        }
        let grant: VideoGrant
        do {
            grant = try verifier.verify(token)
        } catch .expired {
            throw VideoError(code: "tokenExpired", detail: "The token has expired.")
        } catch {
            throw VideoError(code: "invalidToken", detail: "\(error)")
        }
        guard grant.sessionID == sid else { throw VideoError(code: "invalidToken", detail: "The token is for another session.") }
        // The token's signer is the project it acts for: a session of any other project (another
        // application, or the account key for an application's session) does not exist for it.
        guard try core.videoSessions.get(id: sid, project: grant.issuer) != nil else {
            throw VideoError(code: "sessionNotFound", detail: "No such session.")
        }
        if hub.connection(for: ws) != nil { hub.disconnect(socket: ws, reason: "clientDisconnected") }
        let (c, others, streams) = hub.connect(socket: ws, grant: grant)
        return [
            "connectionId": .string(c.id), "sessionId": .string(sid), "connection": c.json,
            "connections": .array(others.map(\.json)), "streams": .array(streams.map(\.json)),
            "capabilities": ["publish": .bool(grant.role.canPublish), "subscribe": .bool(grant.role.canSubscribe),
                             "forceDisconnect": .bool(grant.role.canModerate), "forceMute": .bool(grant.role.canModerate)],
        ]
    }

    static func validateSignal(_ body: JSONValue) throws -> (String, String) {
        let type = body["type"]?.stringValue ?? ""
        let data = body["data"]?.stringValue ?? ""
        guard type.utf8.count <= 128, data.utf8.count <= 8192 else {
            throw VideoError(code: "invalidSignal", detail: "type is at most 128 bytes and data at most 8192.")
        }
        return (type, data)
    }
}
