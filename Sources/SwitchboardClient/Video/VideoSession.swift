import Foundation
import MediaLoad
import Synchronization
import Wire

/// A client of a video session (docs/protocol.md, "Video sessions"): connect with a video token,
/// publish a recording and a source's audio, subscribe to others' streams, signal, disconnect.
/// Media goes through the server's SFU on the client-role stack; in a relayed session it goes peer to peer, one
/// connection per subscriber of each stream this client publishes (a mesh), the server passing their offers, answers
/// and candidates.
///
/// When the socket drops, the server ends the connection and its streams at once; the client
/// connects again with the same token within `reconnectWindow` (`.reconnecting`, then
/// `.reconnected` with the new connection id), publishes its streams again (the others see them
/// destroyed and created anew; the ids `publish` returned keep working here) and subscribes again
/// to the streams it had that are still there. Past the window it ends with `.disconnected`.
public final class VideoSession: Sendable {
    public let sessionID: String
    /// The others connected and the streams published when this client connected.
    public let connections: [VideoConnection]
    public let streams: [VideoStream]
    /// Whether the session is relayed (created with `p2p.preference: enabled`): its clients send media to
    /// each other, not through the server. `publish` and `subscribe` then connect this client's own media peer to
    /// peer (from its own addresses and, with a TURN server among `iceServers`, a relayed one); an app with a WebRTC
    /// stack of its own connects with `publishRelayed`, `subscribeRelayed`, `relay` and the `.relay` events instead.
    public let relayed: Bool
    /// The STUN and TURN servers the server gives this client for its peer connections (empty unless the
    /// operator set some), a TURN server's with a credential of this connection's, valid for a day.
    public let iceServers: [ICEServer]
    let server: URL
    let token: String
    let caFile: String?
    let reconnectWindow: Duration?
    /// The local address this client's media uses, or nil for every address (`connect`'s `mediaAddress`).
    let mediaAddress: String?
    /// The TURN server of its media's relayed candidates (the first over UDP among `iceServers`), all its media through it
    /// when relay-only (`connect`'s `iceTransportPolicy: .relay`).
    let turnRelay: MediaRelay?

    private struct Link {
        var session: Session
        var connectionID: String
        var reconnecting = false
        var ended = false
    }
    /// A stream this client publishes: what `publish` was given, and the server's id for it now.
    private struct Published {
        var name: String
        var audio: AudioSource?
        var video: IVFFileSource?
        var publishCaptions: Bool
        var audioFallback: Bool
        var current: String
        /// Its media through the server (routed), or nil in a relayed session.
        var peer: MediaPeerHandle?
        /// In a relayed session: a peer connection per subscriber (by its id), all sending the same audio.
        var mesh: [String: MediaPeerHandle] = [:]
        var fanout: AudioFanout?

        var peers: [MediaPeerHandle] { (peer.map { [$0] } ?? []) + Array(mesh.values) }
    }
    private struct Subscribed {
        var audio: AudioSink?
        var video: VideoFrameCounter?
        var peer: MediaPeerHandle
        /// What was asked of the stream (`video:subscriberPreferences` fields), asked again after a reconnect.
        var preferences: [String: JSONValue] = [:]
    }
    private let link: Mutex<Link>
    /// Keyed by the id `publish` returned.
    private let publishers = Mutex<[String: Published]>([:])
    private let subscribers = Mutex<[String: Subscribed]>([:])
    /// The streams whose captions this client asked for (asked again after a reconnect).
    private let captioned = Mutex<Set<String>>([])
    /// The app's event streams, and the events that came before the first was asked for.
    private let eventStreams = Mutex<EventStreams>(EventStreams())
    private let relays = Mutex<[Task<Void, Never>]>([])
    /// Relay messages for a stream this client is publishing in a relayed session whose `video:publish` reply has
    /// not come yet (a subscriber can be announced first), kept until it has; bounded.
    private let early = Mutex<(publishing: Int, messages: [(stream: String, subscriber: String, message: VideoRelayMessage)])>((0, []))
    private let nextStream = Atomic<Int>(0)

    private init(server: URL, token: String, caFile: String?, reconnectWindow: Duration?, mediaAddress: String?, relay: MediaRelay?,
                 sessionID: String, link: Session, reply: JSONValue) {
        self.mediaAddress = mediaAddress
        self.turnRelay = relay
        self.server = server
        self.token = token
        self.caFile = caFile
        self.reconnectWindow = reconnectWindow
        self.sessionID = sessionID
        self.link = Mutex(Link(session: link, connectionID: reply["connectionId"]?.stringValue ?? ""))
        connections = (reply["connections"]?.arrayValue ?? []).compactMap { VideoConnection(json: $0) }
        streams = (reply["streams"]?.arrayValue ?? []).compactMap { VideoStream(json: $0) }
        relayed = reply["mediaMode"]?.stringValue == "relayed"
        iceServers = ICEServer.list(reply["iceServers"])
    }

    /// This client's connection id (a new one after a reconnect).
    public var connectionID: String { link.withLock { $0.connectionID } }

    /// Connects to `sessionID` with a client token (Vonage JWT, OpenTok JWT or `T1==`).
    /// `reconnectWindow`: how long to keep trying after the socket drops (nil: do not reconnect). `mediaAddress`: a
    /// numeric local address for the media's sockets (in a relayed session, the only candidate the other clients
    /// check; one on loopback checks theirs on loopback only), nil for every address.
    /// Each media connection also has a relayed candidate on the first TURN server over UDP the server gives it
    /// (`iceServers`, with its credential), when there is one; `iceTransportPolicy: .relay` sends all of this client's
    /// media through it, as a browser told `iceTransportPolicy: "relay"` does.
    /// - Throws: `.invalidToken`, `.tokenExpired`, `.server(code: "sessionNotFound", …)`, `.unreachable`; with `.relay`
    ///   and no TURN server over UDP to use, `.server(code: "mediaFailed", …)`.
    public static func connect(to server: URL, sessionID: String, token: String, caFile: String? = nil,
                               reconnectWindow: Duration? = .seconds(30), mediaAddress: String? = nil,
                               iceTransportPolicy: ICETransportPolicy = .all) async throws(SessionError) -> VideoSession {
        let (link, reply, pushes, states) = try await open(server: server, sessionID: sessionID, token: token, caFile: caFile)
        let relay = await ICEServer.list(reply["iceServers"]).mediaRelay(iceTransportPolicy)
        if iceTransportPolicy == .relay {
            guard relay != nil else {
                link.shutdown(.closed, notify: false)
                throw .media("relay-only media needs a TURN server over UDP among the session's ICE servers (the server's --ice-servers)")
            }
        }
        let session = VideoSession(server: server, token: token, caFile: caFile, reconnectWindow: reconnectWindow, mediaAddress: mediaAddress,
                                   relay: relay, sessionID: sessionID, link: link, reply: reply)
        session.follow(pushes: pushes, states: states)
        return session
    }

    /// A socket that has sent `video:connect`, with its pushes and states (registered before, so none is missed).
    private static func open(server: URL, sessionID: String, token: String, caFile: String?) async throws(SessionError)
        -> (Session, JSONValue, AsyncStream<JSONValue>, AsyncStream<ConnectionState>) {
        var options = Session.Options()
        options.reconnect = false
        options.caFile = caFile
        let link = try Session(server: server, token: token, options: options)
        let pushes = link.pushes(prefix: "video:")
        let states = link.states()
        do {
            try await link.open()
            let reply = try await link.request("video:connect", ["sessionId": .string(sessionID), "token": .string(token)])
            link.linked()
            return (link, reply, pushes, states)
        } catch {
            link.shutdown(.closed, notify: false)
            throw error
        }
    }

    private func follow(pushes: AsyncStream<JSONValue>, states: AsyncStream<ConnectionState>) {
        let task = Task { [weak self] in
            await withTaskGroup(of: Void.self) { group in
                group.addTask { [weak self] in
                    for await message in pushes {
                        guard let event = VideoEvent(push: message) else { continue }
                        if case .publisherAudioFallback(let streamID, _, let sendVideo) = event { await self?.sendVideo(streamID, sendVideo) }
                        if case .unusedLayers(let streamID, let rids) = event { await self?.pauseLayers(streamID, Set(rids)) }
                        if case .muteForced(let streamID) = event { await self?.muteRelayed(streamID) }
                        if case .relay(let streamID, let subscriberID, let message) = event {
                            await self?.handleRelay(streamID, subscriberID, message)
                        }
                        self?.emit(event)
                    }
                }
                group.addTask { [weak self] in
                    for await state in states {
                        guard case .disconnected(let why) = state, why != .closed, let self else { continue }
                        if self.reconnectWindow == nil {
                            self.emit(.disconnected(reason: "networkDisconnected"))
                        } else {
                            Task { await self.reconnect() }
                        }
                    }
                }
            }
        }
        relays.withLock { $0.append(task) }
    }

    /// The publisher audio fallback's word on one of this client's streams: its video stopped or sent again.
    private func sendVideo(_ streamID: String, _ on: Bool) async {
        await publisher(streamID)?.setVideoPaused(!on)
    }

    /// The sizes of one of this client's simulcast streams no one takes: paused until someone does.
    private func pauseLayers(_ streamID: String, _ rids: Set<String>) async {
        await publisher(streamID)?.setUnusedLayers(rids)
    }

    /// The media of the stream this client publishes under the server's id `streamID` now.
    private func publisher(_ streamID: String) -> MediaPeerHandle? {
        publishers.withLock { $0.values.first { $0.current == streamID }?.peer }
    }

    // MARK: Relayed sessions: this client's media peer to peer

    /// A relay message for this client's own media (a stream it publishes, or one it subscribed to with
    /// `subscribe`): makes, answers, feeds or closes the peer connection it is about. Others are left to the app.
    private func handleRelay(_ streamID: String, _ subscriberID: String, _ message: VideoRelayMessage) async {
        guard relayed else { return }
        if let (id, published) = publishers.withLock({ p in p.first { $0.value.current == streamID } }) {
            switch message {
            case .subscribe:
                guard published.mesh[subscriberID] == nil, let peer = try? await MediaPeerHandle(address: mediaAddress, relay: turnRelay) else { return }
                publishers.withLock { $0[id]?.mesh[subscriberID] = peer }
                do {
                    let offer = try await peer.publishOffer(audio: published.fanout?.reader(), video: published.video, peerToPeer: true)
                    try await relay(streamID: streamID, subscriberID: subscriberID, .description(type: "offer", sdp: offer))
                    trickleRelayCandidate(of: peer, streamID: streamID, subscriberID: subscriberID)
                } catch {
                    emit(.error(error))
                }
            case .description(let type, let sdp) where type == "answer":
                do { try await published.mesh[subscriberID]?.applyAnswer(sdp, peerToPeer: true) } catch { emit(.error(error)) }
            case .candidate(let candidate):
                await published.mesh[subscriberID]?.addCandidate(candidate.candidate)
            case .end:
                publishers.withLock { $0[id]?.mesh.removeValue(forKey: subscriberID) }?.close()
            default:
                break
            }
        } else if let subscribed = subscribers.withLock({ $0[streamID] }) {
            switch message {
            case .description(let type, let sdp) where type == "offer":
                do {
                    let answer = try await subscribed.peer.answer(offer: sdp, owners: Self.owners(sdp, streamID), sink: subscribed.audio,
                                                                  videoSink: subscribed.video, peerToPeer: true)
                    try await relay(streamID: streamID, subscriberID: subscriberID, .description(type: "answer", sdp: answer))
                    trickleRelayCandidate(of: subscribed.peer, streamID: streamID, subscriberID: subscriberID)
                } catch {
                    emit(.error(error))
                }
            case .candidate(let candidate):
                await subscribed.peer.addCandidate(candidate.candidate)
            default:
                break
            }
        } else {
            early.withLock { e in
                if e.publishing > 0 && e.messages.count < 64 { e.messages.append((streamID, subscriberID, message)) }
            }
        }
    }

    /// Sends a peer connection's relayed candidate to the other end once allocated (its offer or answer went with the
    /// host candidates, so a slow or silent TURN server delays nothing).
    private func trickleRelayCandidate(of peer: MediaPeerHandle, streamID: String, subscriberID: String) {
        guard turnRelay != nil else { return }
        Task {
            guard let line = await peer.trickledRelayCandidate() else { return }
            try? await relay(streamID: streamID, subscriberID: subscriberID, .candidate(ICECandidate(candidate: line, sdpMid: "0", sdpMLineIndex: 0)))
        }
    }

    /// A moderator muted one of this client's streams: in a relayed session no server carries its audio to stop, so
    /// the client stops sending it itself (through the server, the server already stopped forwarding it).
    private func muteRelayed(_ streamID: String) async {
        guard relayed, let peers = publishers.withLock({ $0.values.first { $0.current == streamID }?.peers }) else { return }
        for peer in peers { await peer.setMuted(true) }
    }

    /// Every m-line of an offer for one stream carries that stream.
    private static func owners(_ offer: String, _ streamID: String) -> [String: String] {
        let media = (try? SessionDescription.parse(offer))?.media ?? []
        return Dictionary(media.compactMap { $0.mid.map { ($0, streamID) } }, uniquingKeysWith: { a, _ in a })
    }

    /// What came for `streamID` before its `video:publish` reply, now that this client knows it is its own (and has
    /// stored it: relay messages for it find it from now on).
    private func takeEarly(_ streamID: String) -> [(subscriber: String, message: VideoRelayMessage)] {
        guard relayed else { return [] }
        return early.withLock { e in
            e.publishing -= 1
            defer { e.messages.removeAll { $0.stream == streamID } }
            return e.messages.filter { $0.stream == streamID }.map { ($0.subscriber, $0.message) }
        }
    }

    struct EventStreams {
        var streams: [Int: AsyncStream<VideoEvent>.Continuation] = [:]
        /// Until the first `events()` (nil after it): what was pushed since `connect` returned, for that first stream —
        /// a stream published then is not in `streams`, and no stream asked for later would have it. At most `backlogLimit`.
        var backlog: [VideoEvent]? = []
        static let backlogLimit = 256
    }

    private func emit(_ event: VideoEvent) {
        eventStreams.withLock { s in
            guard s.backlog == nil else {
                if s.backlog!.count < EventStreams.backlogLimit { s.backlog!.append(event) }
                return
            }
            for c in s.streams.values { c.yield(event) }
        }
    }

    /// Everything that happens from now on; the first element is `.connected`. The first stream asked for also
    /// begins with what happened since `connect` returned (up to 256 events): with `streams` and `connections`,
    /// the app misses nothing.
    public func events() -> AsyncStream<VideoEvent> {
        let (stream, continuation) = AsyncStream<VideoEvent>.makeStream(bufferingPolicy: .unbounded)
        let id = nextStream.wrappingAdd(1, ordering: .relaxed).oldValue
        continuation.yield(.connected(connectionID: connectionID))
        eventStreams.withLock { s in
            for e in s.backlog ?? [] { continuation.yield(e) }
            s.backlog = nil
            s.streams[id] = continuation
        }
        continuation.removeOnTermination { [weak self] in _ = self?.eventStreams.withLock { $0.streams.removeValue(forKey: id) } }
        return stream
    }

    // MARK: Publishing and subscribing

    /// Publishes a stream: `video` replayed as a camera (several sizes at once for an `IVFFileSource(simulcast:)`, the
    /// sizes no one takes paused while they are not), `audio` encoded with Opus. Returns the
    /// stream; others get `.streamCreated` once its media is flowing. With `publishCaptions`, live
    /// captions (when the session's app server starts them) transcribe its audio. With `audioFallback` (the Video
    /// API's publisher audio fallback), the server judges this client's own link: the video stops while the link
    /// loses too much of it (the audio goes on) and is tried again now and then (`.publisherAudioFallback`).
    public func publish(name: String, audio: AudioSource? = nil, video: IVFFileSource? = nil,
                        publishCaptions: Bool = false, audioFallback: Bool = false) async throws(SessionError) -> VideoStream {
        let (stream, peer) = try await startPublishing(name: name, audio: audio, video: video, publishCaptions: publishCaptions,
                                                       audioFallback: audioFallback)
        publishers.withLock {
            $0[stream.id] = Published(name: name, audio: audio, video: video, publishCaptions: publishCaptions, audioFallback: audioFallback,
                                      current: stream.id, peer: peer, fanout: relayed ? audio.map(AudioFanout.init) : nil)
        }
        for (subscriber, message) in takeEarly(stream.id) { await handleRelay(stream.id, subscriber, message) }
        return stream
    }

    /// Through the server: the stream and its peer connection. In a relayed session: the stream announced, no peer
    /// (each subscriber gets one when it comes).
    private func startPublishing(name: String, audio: AudioSource?, video: IVFFileSource?,
                                 publishCaptions: Bool, audioFallback: Bool) async throws(SessionError) -> (VideoStream, MediaPeerHandle?) {
        if relayed {
            // Until the caller has stored the stream (`takeEarly`), its relay messages are kept.
            early.withLock { $0.publishing += 1 }
            do {
                return (try await publishRelayed(name: name, hasAudio: audio != nil, hasVideo: video != nil), nil)
            } catch {
                early.withLock { $0.publishing -= 1 }
                throw error
            }
        }
        let peer = try await MediaPeerHandle(address: mediaAddress, relay: turnRelay)
        do throws(SessionError) {
            let offer = try await peer.publishOffer(audio: audio, video: video)
            let (stream, answer) = try await publish(name: name, offer: offer, hasAudio: audio != nil, hasVideo: video != nil,
                                                     publishCaptions: publishCaptions, audioFallback: audioFallback)
            try await peer.applyAnswer(answer)
            return (stream, peer)
        } catch {
            peer.close()
            throw error
        }
    }

    /// Whether live captions transcribe one of this client's streams.
    public func setPublishCaptions(_ streamID: String, _ on: Bool) async throws(SessionError) {
        let current = publishers.withLock { p -> String in
            p[streamID]?.publishCaptions = on
            return p[streamID]?.current ?? streamID
        }
        try await request("video:publishCaptions", ["streamId": .string(current), "publishCaptions": .bool(on)])
    }

    /// Asks for a stream's captions (`.captionReceived` events while live captions run), or stops them.
    public func subscribeToCaptions(_ streamID: String, _ on: Bool = true) async throws(SessionError) {
        try await request("video:subscribeToCaptions", ["streamId": .string(streamID), "subscribe": .bool(on)])
        captioned.withLock { if on { $0.insert(streamID) } else { $0.remove(streamID) } }
    }

    /// The picture size this client would like of a subscribed stream whose publisher sends several (simulcast):
    /// the server sends the smallest at least this large, or the largest when none is; nil asks for the largest.
    /// A stream sent in one size is unaffected. Sizes are 1–8192 pixels each (`invalidPreference` otherwise).
    public func setPreferredResolution(_ streamID: String, _ resolution: (width: Int, height: Int)?) async throws(SessionError) {
        let value: JSONValue = resolution.map { ["width": .number(Double($0.width)), "height": .number(Double($0.height))] } ?? .null
        try await setPreferences(streamID, ["preferredResolution": value])
    }

    /// The frame rate this client would like of a subscribed stream whose publisher sends temporal layers (VP8's):
    /// the server sends the fewest layers that make it, or every frame when none do; nil asks for every frame.
    /// Rates are 1–60 frames per second (`invalidPreference` otherwise).
    public func setPreferredFrameRate(_ streamID: String, _ rate: Double?) async throws(SessionError) {
        try await setPreferences(streamID, ["preferredFrameRate": rate.map(JSONValue.number) ?? .null])
    }

    /// Whether this client takes a subscribed stream's audio, and its video (OpenTok's `subscribeToAudio`,
    /// `subscribeToVideo`): the server stops sending what it does not, and sends it again when asked (video from its
    /// next key frame, asked for at once).
    public func subscribeToAudio(_ streamID: String, _ on: Bool) async throws(SessionError) {
        try await setPreferences(streamID, ["subscribeToAudio": .bool(on)])
    }

    public func subscribeToVideo(_ streamID: String, _ on: Bool) async throws(SessionError) {
        try await setPreferences(streamID, ["subscribeToVideo": .bool(on)])
    }

    /// Whether the server turns a subscribed stream's video off while this client's link loses too much of it, and on
    /// again when it can carry it (the Video API's subscriber audio fallback: on unless turned off), telling it with
    /// `.audioFallback` events.
    public func setAudioFallback(_ streamID: String, _ on: Bool) async throws(SessionError) {
        try await setPreferences(streamID, ["audioFallback": .bool(on)])
    }

    /// Asks `changes` of a subscribed stream; once taken, they are kept to be asked again after a reconnect.
    private func setPreferences(_ streamID: String, _ changes: [String: JSONValue]) async throws(SessionError) {
        try await request("video:subscriberPreferences", changes.merging(["streamId": .string(streamID)]) { a, _ in a })
        subscribers.withLock { $0[streamID]?.preferences.merge(changes) { _, new in new } }
    }

    /// Stops publishing a stream.
    public func unpublish(_ streamID: String) async throws(SessionError) {
        guard let published = publishers.withLock({ $0.removeValue(forKey: streamID) }) else {
            try await request("video:unpublish", ["streamId": .string(streamID)])
            return
        }
        for peer in published.peers { peer.close() }
        try await request("video:unpublish", ["streamId": .string(published.current)])
    }

    /// Receives a stream: its audio into `audio`, its video frames counted by `video`.
    public func subscribe(_ streamID: String, audio: AudioSink? = nil, video: VideoFrameCounter? = nil) async throws(SessionError) {
        let peer = try await startSubscribing(streamID, audio: audio, video: video)
        subscribers.withLock { $0[streamID] = Subscribed(audio: audio, video: video, peer: peer) }
    }

    private func startSubscribing(_ streamID: String, audio: AudioSink?, video: VideoFrameCounter?) async throws(SessionError) -> MediaPeerHandle {
        let peer = try await MediaPeerHandle(address: mediaAddress, relay: turnRelay)
        if relayed {
            // The publisher's offer can come before the reply: the peer is where it will look first.
            subscribers.withLock { s in
                if s[streamID] == nil { s[streamID] = Subscribed(audio: audio, video: video, peer: peer) } else { s[streamID]?.peer = peer }
            }
            do throws(SessionError) {
                _ = try await subscribeRelayed(streamID)
                return peer
            } catch {
                subscribers.withLock { _ = $0.removeValue(forKey: streamID) }
                peer.close()
                throw error
            }
        }
        do throws(SessionError) {
            try await subscribe(streamID) { offer in
                try await peer.answer(offer: offer, owners: Self.owners(offer, streamID), sink: audio, videoSink: video)
            }
            return peer
        } catch {
            peer.close()
            throw error
        }
    }

    public func unsubscribe(_ streamID: String) async throws(SessionError) {
        subscribers.withLock { $0.removeValue(forKey: streamID) }?.peer.close()
        try await request("video:unsubscribe", ["streamId": .string(streamID)])
    }

    /// Sends a signal to everyone in the session, or to one connection.
    public func signal(type: String, data: String, to connectionID: String? = nil) async throws(SessionError) {
        var body: [String: JSONValue] = ["type": .string(type), "data": .string(data)]
        if let connectionID { body["to"] = .string(connectionID) }
        try await request("video:signal", body)
    }

    /// Counters of a published or subscribed stream's connection (the current one, after a reconnect).
    public func statistics(_ streamID: String) async -> MediaStatistics? {
        if let published = publishers.withLock({ $0[streamID] }), published.peer == nil {
            // Relayed: its connections to every subscriber together.
            var sum = MediaStatistics(connected: false, packetsSent: 0, packetsReceived: 0)
            for peer in published.mesh.values {
                let one = await peer.statistics()
                sum.connected = sum.connected || one.connected
                sum.packetsSent += one.packetsSent
                sum.packetsReceived += one.packetsReceived
                sum.throughTURN = sum.throughTURN || one.throughTURN
            }
            return sum
        }
        guard let peer = publishers.withLock({ $0[streamID]?.peer }) ?? subscribers.withLock({ $0[streamID]?.peer }) else { return nil }
        return await peer.statistics()
    }

    @discardableResult
    func request(_ type: String, _ body: [String: JSONValue], timeout: Duration? = nil) async throws(SessionError) -> JSONValue {
        try await link.withLock { $0.session }.request(type, body, timeout: timeout)
    }

    // MARK: Reconnecting

    /// The socket dropped and the server ended the connection with it: connect again with the same
    /// token, publish again and subscribe again to what is still there; give up after the window.
    private func reconnect() async {
        let start = link.withLock { l -> Bool in
            guard !l.reconnecting, !l.ended else { return false }
            l.reconnecting = true
            return true
        }
        guard start, let window = reconnectWindow else { return }
        emit(.reconnecting)
        for p in publishers.withLock({ p in p.values.flatMap(\.peers) }) { p.close() }
        publishers.withLock { for id in $0.keys { $0[id]?.mesh = [:] } }
        for p in subscribers.withLock({ $0.values.map(\.peer) }) { p.close() }
        let deadline = ContinuousClock.now + window
        var backoff = Backoff(first: .milliseconds(250), maximum: .seconds(4))
        while ContinuousClock.now < deadline, !link.withLock({ $0.ended }) {
            try? await Task.sleep(for: backoff.next(unit: Double.random(in: 0..<1)))
            let opened: (Session, JSONValue, AsyncStream<JSONValue>, AsyncStream<ConnectionState>)
            do throws(SessionError) {
                opened = try await Self.open(server: server, sessionID: sessionID, token: token, caFile: caFile)
            } catch .invalidToken, .tokenExpired {
                break
            } catch let e where e.code == "sessionNotFound" {
                break
            } catch {
                continue
            }
            let (session, reply, pushes, states) = opened
            let current = link.withLock { l -> Bool in
                guard !l.ended else { return false }
                l.session.shutdown(.closed, notify: false)
                l.session = session
                l.connectionID = reply["connectionId"]?.stringValue ?? ""
                return true
            }
            guard current else {
                session.shutdown(.closed, notify: false)
                return
            }
            follow(pushes: pushes, states: states)
            if await restoreMedia(present: Set((reply["streams"]?.arrayValue ?? []).compactMap { $0["streamId"]?.stringValue })) {
                link.withLock { $0.reconnecting = false }
                emit(.reconnected(connectionID: connectionID))
                return
            }
            // Dropped again while publishing: try again within the window.
        }
        link.withLock { $0.reconnecting = false }
        emit(.disconnected(reason: "networkDisconnected"))
    }

    /// Publishes every stream again and subscribes again to those of `present`; false when the new
    /// socket dropped meanwhile.
    private func restoreMedia(present: Set<String>) async -> Bool {
        for (id, p) in publishers.withLock({ Array($0) }) {
            do throws(SessionError) {
                let (stream, peer) = try await startPublishing(name: p.name, audio: p.audio, video: p.video, publishCaptions: p.publishCaptions,
                                                               audioFallback: p.audioFallback)
                publishers.withLock { $0[id]?.current = stream.id; $0[id]?.peer = peer }
                for (subscriber, message) in takeEarly(stream.id) { await handleRelay(stream.id, subscriber, message) }
            } catch .transportClosed, .closed {
                return false
            } catch {
                publishers.withLock { _ = $0.removeValue(forKey: id) }
                emit(.error(error))
            }
        }
        for id in captioned.withLock({ $0 }) {
            guard present.contains(id) else {
                captioned.withLock { _ = $0.remove(id) }
                continue
            }
            do throws(SessionError) {
                try await request("video:subscribeToCaptions", ["streamId": .string(id), "subscribe": true])
            } catch .transportClosed, .closed {
                return false
            } catch {
                captioned.withLock { _ = $0.remove(id) }
                emit(.error(error))
            }
        }
        for (id, s) in subscribers.withLock({ Array($0) }) {
            guard present.contains(id) else {
                subscribers.withLock { _ = $0.removeValue(forKey: id) }
                continue
            }
            do throws(SessionError) {
                let peer = try await startSubscribing(id, audio: s.audio, video: s.video)
                subscribers.withLock { $0[id]?.peer = peer }
                if !s.preferences.isEmpty {
                    try await request("video:subscriberPreferences", s.preferences.merging(["streamId": .string(id)]) { a, _ in a })
                }
            } catch .transportClosed, .closed {
                return false
            } catch {
                subscribers.withLock { _ = $0.removeValue(forKey: id) }
                emit(.error(error))
            }
        }
        return true
    }

    /// Leaves the session: streams end, the socket closes.
    public func disconnect() async {
        _ = try? await request("video:disconnect", [:], timeout: .seconds(3))
        let session = link.withLock { l -> Session in
            l.ended = true
            return l.session
        }
        for p in publishers.withLock({ p in p.values.flatMap(\.peers) }) { p.close() }
        for p in subscribers.withLock({ $0.values.map(\.peer) }) { p.close() }
        publishers.withLock { $0 = [:] }
        subscribers.withLock { $0 = [:] }
        await MediaPeerHandle.settle()
        session.shutdown(.closed, notify: false)
        for t in relays.withLock({ $0 }) { t.cancel() }
        let streams = eventStreams.withLock { s in
            defer { s.streams = [:] }
            return Array(s.streams.values)
        }
        for c in streams { c.finish() }
    }
}
