import Foundation
import Synchronization
import Wire

/// A client of a video session (docs/protocol.md, "Video sessions"): connect with a video token,
/// publish a recording and a source's audio, subscribe to others' streams, signal, disconnect.
/// Media goes through the server's SFU on the client-role stack.
public final class VideoSession: Sendable {
    public let sessionID: String
    public let connectionID: String
    /// The others connected and the streams published when this client connected.
    public let connections: [VideoConnection]
    public let streams: [VideoStream]
    let link: Session
    private let publishers = Mutex<[String: MediaPeerHandle]>([:])
    private let subscribers = Mutex<[String: MediaPeerHandle]>([:])
    private let eventStreams = Mutex<[Int: AsyncStream<VideoEvent>.Continuation]>([:])
    private let relay = Mutex<Task<Void, Never>?>(nil)
    private let nextStream = Atomic<Int>(0)

    init(link: Session, sessionID: String, reply: JSONValue) {
        self.link = link
        self.sessionID = sessionID
        connectionID = reply["connectionId"]?.stringValue ?? ""
        connections = (reply["connections"]?.arrayValue ?? []).compactMap { VideoConnection(json: $0) }
        streams = (reply["streams"]?.arrayValue ?? []).compactMap { VideoStream(json: $0) }
    }

    /// Connects to `sessionID` with a client token (Vonage JWT, OpenTok JWT or `T1==`).
    /// - Throws: `.invalidToken`, `.tokenExpired`, `.server(code: "sessionNotFound", …)`, `.unreachable`.
    public static func connect(to server: URL, sessionID: String, token: String, caFile: String? = nil) async throws(SessionError) -> VideoSession {
        var options = Session.Options()
        options.reconnect = false
        options.caFile = caFile
        let link = try Session(server: server, token: token, options: options)
        let pushes = link.pushes(prefix: "video:")
        let states = link.states()
        let reply: JSONValue
        do {
            try await link.open()
            reply = try await link.request("video:connect", ["sessionId": .string(sessionID), "token": .string(token)])
        } catch {
            link.shutdown(.closed, notify: false)
            throw error
        }
        let session = VideoSession(link: link, sessionID: sessionID, reply: reply)
        session.start(pushes: pushes, states: states)
        return session
    }

    private func start(pushes: AsyncStream<JSONValue>, states: AsyncStream<ConnectionState>) {
        let task = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [weak self] in
                    for await message in pushes {
                        guard let event = VideoEvent(push: message) else { continue }
                        self?.emit(event)
                    }
                }
                group.addTask { [weak self] in
                    for await state in states {
                        if case .disconnected(let why) = state, why != .closed { self?.emit(.disconnected(reason: "networkDisconnected")) }
                    }
                }
            }
        }
        relay.withLock { $0 = task }
    }

    private func emit(_ event: VideoEvent) {
        eventStreams.withLock { for c in $0.values { c.yield(event) } }
    }

    /// Everything that happens from now on; the first element is `.connected`.
    public func events() -> AsyncStream<VideoEvent> {
        let (stream, continuation) = AsyncStream<VideoEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextStream.wrappingAdd(1, ordering: .relaxed).oldValue
        continuation.yield(.connected(connectionID: connectionID))
        eventStreams.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in _ = self?.eventStreams.withLock { $0.removeValue(forKey: id) } }
        return stream
    }

    /// Publishes a stream: `video` replayed as a camera, `audio` encoded with Opus. Returns the
    /// stream; others get `.streamCreated` once its media is flowing.
    public func publish(name: String, audio: AudioSource? = nil, video: IVFFileSource? = nil) async throws(SessionError) -> VideoStream {
        let peer = try await MediaPeerHandle()
        do throws(SessionError) {
            let offer = try await peer.publishOffer(audio: audio, video: video)
            let reply = try await link.request("video:publish", [
                "name": .string(name), "hasAudio": .bool(audio != nil), "hasVideo": .bool(video != nil), "videoType": "camera", "offer": .string(offer),
            ])
            guard let answer = reply["answer"]?.stringValue, let stream = VideoStream(json: reply["stream"]) ?? VideoStream(json: ["streamId": reply["streamId"] ?? .null]) else {
                throw SessionError.media("video:publish gave no answer")
            }
            try await peer.applyAnswer(answer)
            publishers.withLock { $0[stream.id] = peer }
            return stream
        } catch {
            peer.close()
            throw error
        }
    }

    /// Stops publishing a stream.
    public func unpublish(_ streamID: String) async throws(SessionError) {
        publishers.withLock { $0.removeValue(forKey: streamID) }?.close()
        try await link.request("video:unpublish", ["streamId": .string(streamID)])
    }

    /// Receives a stream: its audio into `audio`, its video frames counted by `video`.
    public func subscribe(_ streamID: String, audio: AudioSink? = nil, video: VideoFrameCounter? = nil) async throws(SessionError) {
        let reply = try await link.request("video:subscribe", ["streamId": .string(streamID)])
        guard let offer = reply["offer"]?.stringValue else { throw SessionError.media("video:subscribe gave no offer") }
        let peer = try await MediaPeerHandle()
        do throws(SessionError) {
            let parsed = try? SessionDescription.parse(offer)
            let owners = Dictionary((parsed?.media ?? []).compactMap { $0.mid.map { ($0, streamID) } }, uniquingKeysWith: { a, _ in a })
            let answer = try await peer.answer(offer: offer, owners: owners, sink: audio, videoSink: video)
            try await link.request("video:subscribe:answer", ["streamId": .string(streamID), "answer": .string(answer)])
            subscribers.withLock { $0[streamID] = peer }
        } catch {
            peer.close()
            throw error
        }
    }

    public func unsubscribe(_ streamID: String) async throws(SessionError) {
        subscribers.withLock { $0.removeValue(forKey: streamID) }?.close()
        try await link.request("video:unsubscribe", ["streamId": .string(streamID)])
    }

    /// Sends a signal to everyone in the session, or to one connection.
    public func signal(type: String, data: String, to connectionID: String? = nil) async throws(SessionError) {
        var body: [String: JSONValue] = ["type": .string(type), "data": .string(data)]
        if let connectionID { body["to"] = .string(connectionID) }
        try await link.request("video:signal", body)
    }

    /// Counters of a published or subscribed stream's connection.
    public func statistics(_ streamID: String) async -> MediaStatistics? {
        guard let peer = publishers.withLock({ $0[streamID] }) ?? subscribers.withLock({ $0[streamID] }) else { return nil }
        return await peer.statistics()
    }

    /// Leaves the session: streams end, the socket closes.
    public func disconnect() async {
        _ = try? await link.request("video:disconnect", [:], timeout: .seconds(3))
        for p in publishers.withLock({ $0.values }) { p.close() }
        for p in subscribers.withLock({ $0.values }) { p.close() }
        publishers.withLock { $0 = [:] }
        subscribers.withLock { $0 = [:] }
        link.shutdown(.closed, notify: false)
        relay.withLock { $0?.cancel() }
        let streams = eventStreams.withLock { s in
            defer { s = [:] }
            return Array(s.values)
        }
        for c in streams { c.finish() }
    }
}
