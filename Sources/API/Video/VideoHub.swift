import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import Wire

/// Media for video streams: publish answers an SDP offer, subscribe offers and takes the answer.
/// The SFU implements it; without one, sessions still carry signaling, signals and stream events.
public protocol VideoMediaBridge: Sendable {
    func publish(sessionID: String, streamID: String, offer: String) async throws -> String
    func subscribe(sessionID: String, streamID: String, subscriberID: String) async throws -> String
    func completeSubscription(sessionID: String, streamID: String, subscriberID: String, answer: String) async throws
    func unpublish(sessionID: String, streamID: String) async
    func unsubscribe(sessionID: String, streamID: String, subscriberID: String) async
    func setAudioMuted(sessionID: String, streamID: String, muted: Bool) async
    /// A connection left: drop everything it subscribed to.
    func connectionClosed(sessionID: String, connectionID: String) async
}

extension VideoMediaBridge {
    public func connectionClosed(sessionID: String, connectionID: String) async {}
}

/// Live state of video sessions: connections, streams, and the pushes that tell clients about them.
public final class VideoHub: Sendable {
    public struct Connection: Sendable {
        public var id: String
        public var sessionID: String
        public var socket: WebSocket
        public var grant: VideoGrant
        public var createdAt: Date

        var json: JSONValue {
            ["connectionId": .string(id), "creationTime": .number(Double(Int(createdAt.timeIntervalSince1970 * 1000))),
             "data": .string(grant.connectionData ?? "")]
        }
    }

    public struct Stream: Sendable {
        public var id: String
        public var connectionID: String
        public var name: String
        public var hasAudio: Bool
        public var hasVideo: Bool
        public var videoType: String
        public var createdAt: Date

        var json: JSONValue {
            ["streamId": .string(id), "connectionId": .string(connectionID), "name": .string(name), "hasAudio": .bool(hasAudio),
             "hasVideo": .bool(hasVideo), "videoType": .string(videoType),
             "creationTime": .number(Double(Int(createdAt.timeIntervalSince1970 * 1000)))]
        }

        /// The REST shape of `/stream`.
        var restJSON: [String: Any] { ["id": id, "videoType": videoType, "name": name, "layoutClassList": [String]()] }
    }

    struct Live {
        var connections: [String: Connection] = [:]
        var streams: [String: Stream] = [:]
    }

    struct State {
        var sessions: [String: Live] = [:]
        /// Sessions under "mute all": streams published while it is on start with audio off.
        var forceMuted: Set<String> = []
        var bySocket: [WebSocket: (session: String, connection: String)] = [:]
    }

    let state = Mutex(State())
    let media = Mutex<(any VideoMediaBridge)?>(nil)

    public init() {}

    public func setMedia(_ bridge: any VideoMediaBridge) { media.withLock { $0 = bridge } }
    var bridge: (any VideoMediaBridge)? { media.withLock { $0 } }

    /// Joins a session; returns the new connection and what is already there.
    func connect(socket: WebSocket, grant: VideoGrant) -> (Connection, [Connection], [Stream]) {
        let c = Connection(id: UUID4.generate(), sessionID: grant.sessionID, socket: socket, grant: grant, createdAt: Date())
        let (others, streams) = state.withLock { s -> ([Connection], [Stream]) in
            let live = s.sessions[grant.sessionID] ?? Live()
            let others = Array(live.connections.values)
            s.sessions[grant.sessionID, default: Live()].connections[c.id] = c
            s.bySocket[socket] = (grant.sessionID, c.id)
            return (others, Array(live.streams.values))
        }
        for o in others { Self.push(o.socket, "video:connectionCreated", ["connection": c.json]) }
        return (c, others, streams)
    }

    func connection(for socket: WebSocket) -> Connection? {
        state.withLock { s in s.bySocket[socket].flatMap { s.sessions[$0.session]?.connections[$0.connection] } }
    }

    func publish(from c: Connection, id: String = UUID4.generate(), name: String, hasAudio: Bool, hasVideo: Bool, videoType: String) -> Stream {
        var stream = Stream(id: id, connectionID: c.id, name: name, hasAudio: hasAudio, hasVideo: hasVideo,
                            videoType: videoType == "screen" ? "screen" : "camera", createdAt: Date())
        let (others, muted) = state.withLock { s -> ([Connection], Bool) in
            let muted = s.forceMuted.contains(c.sessionID)
            if muted { stream.hasAudio = false }
            s.sessions[c.sessionID]?.streams[stream.id] = stream
            return ((s.sessions[c.sessionID]?.connections.values).map { $0.filter { $0.id != c.id } } ?? [], muted)
        }
        for o in others { Self.push(o.socket, "video:streamCreated", ["stream": stream.json]) }
        if muted, let bridge {
            let sid = c.sessionID
            Task { await bridge.setAudioMuted(sessionID: sid, streamID: id, muted: true) }
        }
        return stream
    }

    func stream(sessionID: String, streamID: String) -> Stream? {
        state.withLock { $0.sessions[sessionID]?.streams[streamID] }
    }

    public func streams(sessionID: String) -> [Stream] {
        state.withLock { ($0.sessions[sessionID]?.streams.values).map(Array.init) ?? [] }.sorted { $0.createdAt < $1.createdAt }
    }

    public func connections(sessionID: String) -> [Connection] {
        state.withLock { ($0.sessions[sessionID]?.connections.values).map(Array.init) ?? [] }
    }

    /// Removes a stream and tells everyone else why.
    func unpublish(sessionID: String, streamID: String, reason: String) {
        let (removed, everyone) = state.withLock { s -> (Stream?, [Connection]) in
            let r = s.sessions[sessionID]?.streams.removeValue(forKey: streamID)
            return (r, (s.sessions[sessionID]?.connections.values).map(Array.init) ?? [])
        }
        guard let removed else { return }
        for o in everyone { Self.push(o.socket, "video:streamDestroyed", ["stream": removed.json, "reason": .string(reason)]) }
        if let bridge {
            Task { await bridge.unpublish(sessionID: sessionID, streamID: streamID) }
        }
    }

    /// Removes a connection and its streams; `reason` is clientDisconnected, forceDisconnected or networkDisconnected.
    func disconnect(socket: WebSocket, reason: String) {
        guard let (sid, cid) = state.withLock({ $0.bySocket.removeValue(forKey: socket) }) else { return }
        disconnect(sessionID: sid, connectionID: cid, reason: reason)
    }

    @discardableResult
    func disconnect(sessionID: String, connectionID: String, reason: String) -> Bool {
        let streams = state.withLock { s in (s.sessions[sessionID]?.streams.values.filter { $0.connectionID == connectionID }) ?? [] }
        for st in streams { unpublish(sessionID: sessionID, streamID: st.id, reason: reason) }
        let (removed, others) = state.withLock { s -> (Connection?, [Connection]) in
            let r = s.sessions[sessionID]?.connections.removeValue(forKey: connectionID)
            if let r { s.bySocket[r.socket] = nil }
            let others = (s.sessions[sessionID]?.connections.values).map(Array.init) ?? []
            if s.sessions[sessionID]?.connections.isEmpty == true { s.sessions[sessionID] = nil }
            return (r, others)
        }
        guard let removed else { return false }
        if let bridge { Task { await bridge.connectionClosed(sessionID: sessionID, connectionID: connectionID) } }
        for o in others { Self.push(o.socket, "video:connectionDestroyed", ["connection": removed.json, "reason": .string(reason)]) }
        if reason == "forceDisconnected" {
            Self.push(removed.socket, "video:sessionDisconnected", ["reason": .string(reason)])
        }
        return true
    }

    /// Sends a signal to every connection, or to one; nil when the target connection does not exist.
    @discardableResult
    func signal(sessionID: String, to connectionID: String?, from: String?, type: String, data: String) -> Bool {
        let targets = state.withLock { s -> [Connection]? in
            guard let live = s.sessions[sessionID] else { return connectionID == nil ? [] : nil }
            if let connectionID { return live.connections[connectionID].map { [$0] } }
            return Array(live.connections.values)
        }
        guard let targets else { return false }
        var body: [String: JSONValue] = ["type": .string(type), "data": .string(data)]
        if let from { body["from"] = .string(from) }
        for t in targets { Self.push(t.socket, "video:signal", .object(body)) }
        return true
    }

    /// Forces a stream's audio off (moderation); everyone sees the property change.
    func mute(sessionID: String, streamID: String) -> Bool {
        let (stream, everyone) = state.withLock { s -> (Stream?, [Connection]) in
            guard var st = s.sessions[sessionID]?.streams[streamID] else { return (nil, []) }
            st.hasAudio = false
            s.sessions[sessionID]?.streams[streamID] = st
            return (st, Array(s.sessions[sessionID]!.connections.values))
        }
        guard let stream else { return false }
        for c in everyone {
            Self.push(c.socket, "video:streamPropertyChanged", ["stream": stream.json, "property": "hasAudio", "newValue": false])
            if c.id == stream.connectionID { Self.push(c.socket, "video:muteForced", ["streamId": .string(streamID)]) }
        }
        if let bridge { Task { await bridge.setAudioMuted(sessionID: sessionID, streamID: streamID, muted: true) } }
        return true
    }

    /// The publisher turned its audio or video on or off; everyone else sees the property change.
    func setProperty(sessionID: String, streamID: String, property: String, value: Bool) -> Bool {
        let (stream, others) = state.withLock { s -> (Stream?, [Connection]) in
            guard var st = s.sessions[sessionID]?.streams[streamID] else { return (nil, []) }
            if property == "hasAudio" { st.hasAudio = value } else { st.hasVideo = value }
            s.sessions[sessionID]?.streams[streamID] = st
            return (st, s.sessions[sessionID]?.connections.values.filter { $0.id != st.connectionID } ?? [])
        }
        guard let stream else { return false }
        for c in others {
            Self.push(c.socket, "video:streamPropertyChanged", ["stream": stream.json, "property": .string(property), "newValue": .bool(value)])
        }
        if property == "hasAudio", let bridge { Task { await bridge.setAudioMuted(sessionID: sessionID, streamID: streamID, muted: !value) } }
        return true
    }

    /// Mutes every stream but `excluded`; while `active`, streams published later start muted too.
    func muteAll(sessionID: String, excluded: Set<String>, active: Bool) {
        state.withLock { s in
            if active { s.forceMuted.insert(sessionID) } else { s.forceMuted.remove(sessionID) }
        }
        guard active else { return }
        for st in streams(sessionID: sessionID) where !excluded.contains(st.id) { _ = mute(sessionID: sessionID, streamID: st.id) }
    }

    static func push(_ ws: WebSocket, _ type: String, _ body: JSONValue) {
        ws.send(text: RealtimeGateway.encode(["type": .string(type), "body": body]))
    }
}
