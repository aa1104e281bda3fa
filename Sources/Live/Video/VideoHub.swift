import Crypto
import Foundation
import Media
import Platform
import Synchronization

/// Live state of video sessions: connections, streams, the media behind them, the rules of who may do
/// what (token roles, moderation, signal limits), and the pushes that tell clients about it. The API
/// layer translates `video:*` messages and the `/v2/project/…` routes into calls here.
public final class VideoHub: Sendable {
    public struct Connection: Sendable, Equatable {
        public var id: String
        public var sessionID: String
        public var client: ClientID
        public var grant: VideoGrant
        public var createdAt: Date
        /// Whether the session is relayed (`p2p.preference: enabled`): its clients send their media to each
        /// other, and the server only passes their offers, answers and candidates on (`relay`).
        public var relayed = false
    }

    public struct Stream: Sendable, Hashable {
        public var id: String
        public var connectionID: String
        public var name: String
        public var hasAudio: Bool
        public var hasVideo: Bool
        public var videoType: VideoType
        public var createdAt: Date
        /// The classes a composed layout would place the stream by: the publisher's token's
        /// `initial_layout_class_list`, then whatever the project sets (`setLayoutClassLists`).
        public var layoutClassList: [String] = []
        /// False for a SIP call's stream dialled with `observeForceMute: false`: moderation's force mute (one
        /// stream's, or the whole session's) leaves it as it is.
        public var observesForceMute = true
        /// Whether live captions transcribe its audio: its publisher's choice (`video:publishCaptions`); always
        /// for a stream the server publishes (a SIP call's, a bidirectional Audio Connector's).
        public var publishCaptions = false
    }

    public enum VideoType: String, Sendable, Hashable {
        case camera, screen
    }

    /// A stream's switches a publisher (or a moderator, for audio) turns on and off.
    public enum StreamProperty: String, Sendable, Hashable, CaseIterable {
        case hasAudio, hasVideo
    }

    /// What happens in sessions, in order per session, for session monitoring (the project's callbacks).
    public enum SessionEvent: Sendable {
        /// The first connection joined a session nobody was in.
        case sessionCreated(sessionID: String)
        /// The last connection left.
        case sessionDestroyed(sessionID: String, reason: DisconnectReason)
        case connectionCreated(Connection)
        case connectionDestroyed(Connection, reason: DisconnectReason)
        case streamCreated(Stream, Connection)
        case streamDestroyed(Stream, sessionID: String, Connection?, reason: DisconnectReason)
    }

    /// Why a connection or its stream went away.
    public enum DisconnectReason: String, Sendable, Hashable {
        case clientDisconnected, forceDisconnected, networkDisconnected
    }

    /// Sizes of a signal, whoever sends it.
    public enum Limits {
        public static let signalType = 128
        public static let signalData = 8192
        /// Streams one audio connector mixes (the Video API's limit), and so the most its mix hears at once.
        public static let audioConnectorStreams = 50
        /// Streams live captions transcribe at once in a session (the Video API's limit).
        public static let captionedStreams = 50
        /// The largest SDP and ICE candidate a relayed session's clients pass to each other.
        public static let relayDescription = 65_536
        public static let relayCandidate = 1_024
    }

    /// In a relayed session, one subscriber's peer connection to one stream's publisher.
    public struct RelayPair: Sendable, Hashable {
        public var streamID: String
        public var subscriberID: String
    }

    /// What one side of a relayed subscription passes to the other (`video:relay`).
    public enum RelayMessage: Sendable, Equatable {
        /// To the publisher: a connection subscribed to its stream (make it a peer connection and offer).
        case subscribe
        /// An SDP offer, answer or rollback (`type` and `sdp` as in `RTCSessionDescriptionInit`).
        case description(type: String, sdp: String)
        /// A trickled ICE candidate (as in `RTCIceCandidateInit`); an empty `candidate` ends gathering.
        case candidate(candidate: String, sdpMid: String?, sdpMLineIndex: Int?)
        /// To the publisher: the subscriber went away (unsubscribed or left); close its peer connection.
        case end

        static let descriptionTypes: Set<String> = ["offer", "answer", "pranswer", "rollback"]
    }

    struct Live {
        var connections: [String: Connection] = [:]
        var streams: [String: Stream] = [:]
        /// Per stream, the connections that asked for its captions (`video:subscribeToCaptions`).
        var captionSubscribers: [String: Set<String>] = [:]
        /// A relayed session's subscriptions, each between a subscriber and a stream's publisher.
        var relays: Set<RelayPair> = []
    }

    struct State {
        var sessions: [String: Live] = [:]
        /// Sessions under "mute all": streams published while it is on start with audio off.
        var forceMuted: Set<String> = []
        var byClient: [ClientID: (session: String, connection: String)] = [:]
    }

    let state = Mutex(State())
    /// Session monitoring's observer (`onSessionEvent`), called after the change, off the state's lock.
    ///
    /// Kept inside a struct: a function that is itself a `Mutex`'s value is re-abstracted on every `withLock` and
    /// written back wrapped in two more thunks, so each report called the observer through a longer chain, until the
    /// stack ran out (20,776 frames, 2.8 MB, after an hour of the soak's video sessions).
    private let observer = Mutex<Observer?>(nil)
    private struct Observer: Sendable { let observe: @Sendable (SessionEvent) -> Void }
    let core: PlatformCore
    let verifier: VideoTokenVerifier
    public let bridge: any VideoMediaBridge
    let clients: any Clients

    public init(core: PlatformCore, media: any VideoMediaBridge, clients: any Clients) {
        self.core = core
        verifier = VideoTokenVerifier(core: core)
        bridge = media
        self.clients = clients
    }

    /// Sets the observer of what happens in sessions (one; the server's session monitoring).
    public func onSessionEvent(_ observe: @escaping @Sendable (SessionEvent) -> Void) {
        observer.withLock { $0 = Observer(observe: observe) }
    }

    private func report(_ events: SessionEvent...) {
        guard let observer = observer.withLock({ $0 }) else { return }
        for e in events { observer.observe(e) }
    }

    // MARK: Joining

    /// `video:connect`: the token must be valid, for `sessionID`, and signed by the session's project.
    /// A client already in a session leaves it first. Returns the new connection and what is already there.
    public func connect(client: ClientID, sessionID: String, token: String) throws
        -> (connection: Connection, others: [Connection], streams: [Stream]) {
        let (grant, session) = try verified(token, sessionID: sessionID)
        if connection(for: client) != nil { disconnect(client: client, reason: .clientDisconnected) }
        return join(client: client, grant: grant, relayed: session.mediaMode == "relayed")
    }

    /// `token`'s grant, when it is valid, for `sessionID`, and signed by the session's project.
    func verifiedGrant(_ token: String, sessionID: String) throws -> VideoGrant {
        try verified(token, sessionID: sessionID).grant
    }

    private func verified(_ token: String, sessionID: String) throws -> (grant: VideoGrant, session: VideoSession) {
        let grant: VideoGrant
        do {
            grant = try verifier.verify(token)
        } catch .expired {
            throw LiveError.tokenExpired
        } catch {
            throw LiveError.invalidToken("\(error)")
        }
        guard grant.sessionID == sessionID else { throw LiveError.invalidToken("The token is for another session.") }
        // The token's signer is the project it acts for: a session of any other project (another
        // application, or the account key for an application's session) does not exist for it.
        guard let session = try core.videoSessions.get(id: sessionID, project: grant.issuer) else {
            throw LiveError.sessionNotFound
        }
        return (grant, session)
    }

    /// What a connection of the server's own joins with — an Audio Connector (`POST /v2/project/{id}/connect`), a SIP
    /// call, an Experience Composer: `token`'s grant, checked as `video:connect` checks it, which must allow
    /// subscribing (or, `publishing`, publishing); every one of `streams` must be in the session.
    public func serverConnectionGrant(sessionID: String, token: String, streams: [String]?, publishing: Bool = false) throws -> VideoGrant {
        let grant = try verifiedGrant(token, sessionID: sessionID)
        if publishing {
            guard grant.role.canPublish else { throw LiveError.notAllowedToPublish(role: grant.role) }
        } else {
            guard grant.role.canSubscribe else { throw LiveError.notAllowedToSubscribe }
        }
        if let streams, streams.contains(where: { stream(sessionID: sessionID, streamID: $0) == nil }) {
            throw LiveError.streamNotFound(own: false)
        }
        return grant
    }

    /// The Audio Connector: a connection of the server's own (`client`, no realtime socket behind it) joins
    /// the session with `grant` (`serverConnectionGrant`), and the audio of `streams` (every stream, later ones
    /// too, when nil) is mixed into the port `make` builds. A `bidirectional` one also publishes what its port
    /// says as an audio stream of the session. It leaves as any connection does (a force disconnect, or
    /// `disconnect` when its far end goes) and the mix, and its stream, stop with it.
    /// Returns the connection and its stream's id (a bidirectional one's). `observesForceMute: false` leaves
    /// that stream out of moderation's force mute (a SIP call's, as its dial asked).
    public func connectAudio(client: ClientID, grant: VideoGrant, streams: [String]?, bidirectional: Bool, observesForceMute: Bool = true,
                             make: @escaping MixerPortFactory) async throws(LiveError) -> (connection: Connection, streamID: String?) {
        let sessionID = grant.sessionID
        let (joined, _, _) = join(client: client, grant: grant)
        let voice = bidirectional ? UUID4.generate() : nil
        do {
            try await bridge.connectAudio(sessionID: sessionID, connectionID: joined.id, streams: streams.map(Set.init), voice: voice, make: make)
        } catch {
            disconnect(sessionID: sessionID, connectionID: joined.id, reason: .clientDisconnected)
            throw .media(error)
        }
        // Its far end may have gone while the mix started: then the mix goes too.
        guard connection(for: client)?.id == joined.id else {
            await bridge.connectionClosed(sessionID: sessionID, connectionID: joined.id)
            throw .notConnected
        }
        if let voice {
            _ = announce(from: joined, id: voice, name: "", hasAudio: true, hasVideo: false, videoType: .camera, observesForceMute: observesForceMute,
                         publishCaptions: true)
        }
        return (joined, voice)
    }

    /// The session's audio mix held for `holder` (an archive) until `releaseAudioMix`; with `hearing`, a
    /// participant of it that hears only those streams (`setAudioMixHearing`).
    public func holdAudioMix(sessionID: String, holder: String, hearing: Set<String>? = nil) async throws(MediaError) -> HeldMix {
        try await bridge.holdMix(sessionID: sessionID, holder: holder, hearing: hearing)
    }

    public func setAudioMixHearing(sessionID: String, holder: String, streams: Set<String>) async throws(MediaError) {
        try await bridge.setMixHearing(sessionID: sessionID, holder: holder, streams: streams)
    }

    public func releaseAudioMix(sessionID: String, holder: String) async {
        await bridge.releaseMix(sessionID: sessionID, holder: holder)
    }

    /// Joins a session; returns the new connection and what is already there.
    func join(client: ClientID, grant: VideoGrant, relayed: Bool = false) -> (Connection, [Connection], [Stream]) {
        let c = Connection(id: UUID4.generate(), sessionID: grant.sessionID, client: client, grant: grant, createdAt: Date(), relayed: relayed)
        let (others, streams, first) = state.withLock { s -> ([Connection], [Stream], Bool) in
            let first = s.sessions[grant.sessionID] == nil
            let live = s.sessions[grant.sessionID] ?? Live()
            let others = Array(live.connections.values)
            s.sessions[grant.sessionID, default: Live()].connections[c.id] = c
            s.byClient[client] = (grant.sessionID, c.id)
            return (others, Array(live.streams.values), first)
        }
        for o in others { clients.send(.connectionCreated(c), to: o.client) }
        if first { report(.sessionCreated(sessionID: grant.sessionID)) }
        report(.connectionCreated(c))
        return (c, others, streams)
    }

    public func connection(for client: ClientID) -> Connection? {
        state.withLock { s in s.byClient[client].flatMap { s.sessions[$0.session]?.connections[$0.connection] } }
    }

    /// The connection a request comes from. A request after the token's expiry disconnects it
    /// (`forceDisconnected`) and fails with `tokenExpired`.
    public func caller(_ client: ClientID) throws(LiveError) -> Connection {
        guard let me = connection(for: client) else { throw .notConnected }
        if me.grant.expiresAt < Date() {
            disconnect(client: client, reason: .forceDisconnected)
            throw .tokenExpired
        }
        return me
    }

    // MARK: Requests of a connection

    /// `video:publish`: media first (when there is an offer), so that subscribers reacting to
    /// `streamCreated` find the producers in place. Returns the stream and the SDP answer. In a relayed
    /// session there is no offer: each subscriber's peer connection is made when it subscribes (`relay`).
    public func publish(from me: Connection, name: String, hasAudio: Bool, hasVideo: Bool, videoType: VideoType,
                        publishCaptions: Bool = false, audioFallback: AudioFallbackSettings = AudioFallbackSettings(),
                        offer: String?) async throws(LiveError) -> (stream: Stream, answer: String?) {
        guard me.grant.role.canPublish else { throw .notAllowedToPublish(role: me.grant.role) }
        if me.relayed, offer != nil { throw .relayedSession }
        let streamID = UUID4.generate()
        var answer: String?
        if let offer {
            do {
                answer = try await bridge.publish(sessionID: me.sessionID, streamID: streamID, offer: offer)
            } catch {
                throw .publishFailed(error)
            }
            if audioFallback != AudioFallbackSettings() { await bridge.setAudioFallback(sessionID: me.sessionID, streamID: streamID, audioFallback) }
        }
        guard connection(for: me.client)?.id == me.id else {
            await bridge.unpublish(sessionID: me.sessionID, streamID: streamID)
            throw .notConnected
        }
        let stream = announce(from: me, id: streamID, name: name, hasAudio: hasAudio, hasVideo: hasVideo, videoType: videoType,
                              publishCaptions: publishCaptions)
        return (stream, answer)
    }

    // A request that names no stream or connection (nil) is refused as one that names an unknown one.

    /// `video:unpublish` of one of the caller's own streams.
    public func unpublish(from me: Connection, streamID: String?) throws(LiveError) {
        guard let streamID, let st = stream(sessionID: me.sessionID, streamID: streamID), st.connectionID == me.id else {
            throw .streamNotFound(own: true)
        }
        unpublish(sessionID: me.sessionID, streamID: streamID, reason: .clientDisconnected)
    }

    /// `video:subscribe`: the server's SDP offer for one stream. In a relayed session there is none: the
    /// stream's publisher is told to offer (`RelayMessage.subscribe`), and the two pass their offer,
    /// answer and candidates to each other through `relay`.
    public func subscribe(from me: Connection, streamID: String?) async throws(LiveError) -> (streamID: String, offer: String?) {
        guard me.grant.role.canSubscribe else { throw .notAllowedToSubscribe }
        guard let streamID, stream(sessionID: me.sessionID, streamID: streamID) != nil else { throw .streamNotFound(own: false) }
        if me.relayed {
            let publisher = state.withLock { s -> ClientID? in
                guard let st = s.sessions[me.sessionID]?.streams[streamID],
                      let publisher = s.sessions[me.sessionID]?.connections[st.connectionID] else { return nil }
                s.sessions[me.sessionID]?.relays.insert(RelayPair(streamID: streamID, subscriberID: me.id))
                return publisher.client
            }
            guard let publisher else { throw .streamNotFound(own: false) }
            clients.send(.relay(streamID: streamID, subscriberID: me.id, .subscribe), to: publisher)
            return (streamID, nil)
        }
        do {
            return (streamID, try await bridge.subscribe(sessionID: me.sessionID, streamID: streamID, subscriberID: me.id))
        } catch { throw .subscriptionFailed(error) }
    }

    /// `video:subscriberPreferences`: the picture size this subscriber would like of a simulcast stream (0 × 0: the
    /// largest the publisher sends) and the frame rate of one sent in temporal layers (0: every frame). A stream sent
    /// in one size, or without temporal layers, ignores them.
    public func setPreferences(from me: Connection, streamID: String, _ preferences: SubscriberPreferences) async throws(LiveError) {
        guard !me.relayed else { throw .relayedSession }
        do {
            try await bridge.setPreferences(sessionID: me.sessionID, streamID: streamID, subscriberID: me.id, preferences)
        } catch { throw .streamNotFound(own: false) }
    }

    /// `video:subscribe:answer`.
    public func answerSubscription(from me: Connection, streamID: String, answer: String) async throws(LiveError) {
        do {
            try await bridge.completeSubscription(sessionID: me.sessionID, streamID: streamID, subscriberID: me.id, answer: answer)
        } catch { throw .subscriptionFailed(error) }
    }

    /// `video:unsubscribe`.
    public func unsubscribe(from me: Connection, streamID: String) async {
        if me.relayed {
            endRelays(sessionID: me.sessionID) { $0 == RelayPair(streamID: streamID, subscriberID: me.id) }
            return
        }
        await bridge.unsubscribe(sessionID: me.sessionID, streamID: streamID, subscriberID: me.id)
    }

    /// `video:relay`: passes a description or candidate between the two ends of a relayed subscription —
    /// from the stream's publisher to `subscriberID`, or from that subscriber to the publisher.
    public func relay(from me: Connection, streamID: String?, subscriberID: String?, _ message: RelayMessage) throws(LiveError) {
        switch message {
        case .description(let type, let sdp):
            guard RelayMessage.descriptionTypes.contains(type), sdp.utf8.count <= Limits.relayDescription else { throw .invalidRelay }
        case .candidate(let candidate, let mid, _):
            guard candidate.utf8.count <= Limits.relayCandidate, (mid?.utf8.count ?? 0) <= Limits.relayCandidate else { throw .invalidRelay }
        case .subscribe, .end:
            throw .invalidRelay
        }
        let target = state.withLock { s -> ClientID? in
            guard let streamID, let subscriberID, let live = s.sessions[me.sessionID],
                  live.relays.contains(RelayPair(streamID: streamID, subscriberID: subscriberID)),
                  let publisherID = live.streams[streamID]?.connectionID else { return nil }
            if me.id == publisherID { return live.connections[subscriberID]?.client }
            if me.id == subscriberID { return live.connections[publisherID]?.client }
            return nil
        }
        guard let target, let streamID, let subscriberID else { throw .relayNotFound }
        clients.send(.relay(streamID: streamID, subscriberID: subscriberID, message), to: target)
    }

    /// Ends a relayed session's subscriptions that `match`, telling each one's publisher (`RelayMessage.end`).
    private func endRelays(sessionID: String, where match: (RelayPair) -> Bool) {
        let ended = state.withLock { s -> [(RelayPair, ClientID)] in
            guard let live = s.sessions[sessionID] else { return [] }
            let gone = live.relays.filter(match)
            s.sessions[sessionID]?.relays.subtract(gone)
            return gone.compactMap { pair in
                live.streams[pair.streamID].flatMap { live.connections[$0.connectionID] }.map { (pair, $0.client) }
            }
        }
        for (pair, publisher) in ended { clients.send(.relay(streamID: pair.streamID, subscriberID: pair.subscriberID, .end), to: publisher) }
    }

    /// `video:streamProperty`: the publisher's own audio/video switches, audio first.
    public func setProperties(from me: Connection, streamID: String?, hasAudio: Bool?, hasVideo: Bool?) throws(LiveError) {
        guard let streamID, let st = stream(sessionID: me.sessionID, streamID: streamID), st.connectionID == me.id else {
            throw .streamNotFound(own: true)
        }
        if let hasAudio { _ = setProperty(sessionID: me.sessionID, streamID: streamID, property: .hasAudio, value: hasAudio) }
        if let hasVideo { _ = setProperty(sessionID: me.sessionID, streamID: streamID, property: .hasVideo, value: hasVideo) }
    }

    /// `video:signal` to every connection of the caller's session, or to one.
    public func signal(from me: Connection, to connectionID: String?, type: String, data: String) throws(LiveError) {
        guard type.utf8.count <= Limits.signalType, data.utf8.count <= Limits.signalData else { throw .invalidSignal }
        guard signal(sessionID: me.sessionID, to: connectionID, from: me.id, type: type, data: data) else { throw .connectionNotFound }
    }

    /// `video:publishCaptions`: whether live captions transcribe one of the caller's own streams.
    public func setPublishCaptions(from me: Connection, streamID: String?, _ on: Bool) throws(LiveError) {
        let found = state.withLock { s -> Bool in
            guard let streamID, let st = s.sessions[me.sessionID]?.streams[streamID], st.connectionID == me.id else { return false }
            s.sessions[me.sessionID]?.streams[streamID]?.publishCaptions = on
            return true
        }
        guard found else { throw .streamNotFound(own: true) }
    }

    /// `video:subscribeToCaptions`: whether the caller gets a stream's captions (`video:captionReceived`) while
    /// live captions run; a role that may not subscribe may not have them either.
    public func subscribeToCaptions(from me: Connection, streamID: String?, _ on: Bool) throws(LiveError) {
        guard me.grant.role.canSubscribe else { throw .notAllowedToSubscribe }
        let found = state.withLock { s -> Bool in
            guard let streamID, s.sessions[me.sessionID]?.streams[streamID] != nil else { return false }
            if on {
                s.sessions[me.sessionID]?.captionSubscribers[streamID, default: []].insert(me.id)
            } else {
                s.sessions[me.sessionID]?.captionSubscribers[streamID]?.remove(me.id)
            }
            return true
        }
        guard found else { throw .streamNotFound(own: false) }
    }

    /// A caption of a stream's audio, to the connections that asked for that stream's captions.
    public func deliverCaption(sessionID: String, streamID: String, text: String, isFinal: Bool) {
        let targets = state.withLock { s -> [ClientID] in
            guard let live = s.sessions[sessionID] else { return [] }
            return (live.captionSubscribers[streamID] ?? []).compactMap { live.connections[$0]?.client }
        }
        for t in targets { clients.send(.captionReceived(streamID: streamID, caption: text, isFinal: isFinal), to: t) }
    }

    /// The media engine found sizes of a simulcast stream no one takes (`MediaEvent.unusedLayers`): its publisher
    /// is told, and may stop sending them.
    public func unusedLayers(producer: ProducerID, rids: [String]) {
        guard let (sessionID, streamID) = bridge.stream(of: producer), let publisher = publisherClient(sessionID, streamID) else { return }
        clients.send(.unusedLayers(streamID: streamID, rids: rids), to: publisher)
    }

    /// A subscriber's audio fallback changed (`MediaEvent.audioFallback`): that subscriber is told.
    public func audioFallback(consumer: ConsumerID, _ change: AudioFallbackChange) {
        guard let (sessionID, streamID, subscriberID) = bridge.subscription(of: consumer) else { return }
        let client = state.withLock { $0.sessions[sessionID]?.connections[subscriberID]?.client }
        if let client { clients.send(.audioFallback(streamID: streamID, change), to: client) }
    }

    /// A publisher's audio fallback moved (`MediaEvent.publisherAudioFallback`): the publisher is told, and whether
    /// to send its video now. (Its subscribers are told the video went off or came back as their own consumers'
    /// `audioFallback`.)
    public func publisherAudioFallback(producer: ProducerID, _ change: AudioFallbackChange?, sendVideo: Bool) {
        guard let (sessionID, streamID) = bridge.stream(of: producer), let publisher = publisherClient(sessionID, streamID) else { return }
        clients.send(.publisherAudioFallback(streamID: streamID, change, sendVideo: sendVideo), to: publisher)
    }

    func publisherClient(_ sessionID: String, _ streamID: String) -> ClientID? {
        state.withLock { s in
            guard let live = s.sessions[sessionID], let stream = live.streams[streamID] else { return nil }
            return live.connections[stream.connectionID]?.client
        }
    }

    /// `video:forceDisconnect` (moderators).
    public func forceDisconnect(by me: Connection, connectionID: String?) throws(LiveError) {
        guard me.grant.role.canModerate else { throw .notModerator(.forceDisconnect) }
        guard let connectionID, disconnect(sessionID: me.sessionID, connectionID: connectionID, reason: .forceDisconnected) else {
            throw .connectionNotFound
        }
    }

    /// `video:forceMute` (moderators).
    public func forceMute(by me: Connection, streamID: String?) throws(LiveError) {
        guard me.grant.role.canModerate else { throw .notModerator(.forceMute) }
        guard let streamID, mute(sessionID: me.sessionID, streamID: streamID) else { throw .streamNotFound(own: false) }
    }

    // MARK: Streams

    func announce(from c: Connection, id: String = UUID4.generate(), name: String, hasAudio: Bool, hasVideo: Bool, videoType: VideoType,
                  observesForceMute: Bool = true, publishCaptions: Bool = false) -> Stream {
        var stream = Stream(id: id, connectionID: c.id, name: name, hasAudio: hasAudio, hasVideo: hasVideo,
                            videoType: videoType, createdAt: Date(), layoutClassList: c.grant.initialLayoutClassList,
                            observesForceMute: observesForceMute, publishCaptions: publishCaptions)
        let (others, muted) = state.withLock { s -> ([Connection], Bool) in
            let muted = s.forceMuted.contains(c.sessionID) && observesForceMute
            if muted { stream.hasAudio = false }
            s.sessions[c.sessionID]?.streams[stream.id] = stream
            return ((s.sessions[c.sessionID]?.connections.values).map { $0.filter { $0.id != c.id } } ?? [], muted)
        }
        for o in others { clients.send(.streamCreated(stream), to: o.client) }
        report(.streamCreated(stream, c))
        if muted {
            let sid = c.sessionID
            let bridge = self.bridge
            Task { await bridge.setAudioMuted(sessionID: sid, streamID: id, muted: true) }
        }
        return stream
    }

    func stream(sessionID: String, streamID: String) -> Stream? {
        state.withLock { $0.sessions[sessionID]?.streams[streamID] }
    }

    public func streams(sessionID: String) -> [Stream] {
        Self.streams(in: state.withLock { $0.sessions[sessionID]?.streams })
    }

    /// A session's streams, oldest first.
    private static func streams(in byID: [String: Stream]?) -> [Stream] {
        (byID?.values).map(Array.init)?.sorted { $0.createdAt < $1.createdAt } ?? []
    }

    /// Sets the layout classes of some of a session's streams, all or none: the ids of the streams that are
    /// not in the session, if any, and nothing changed; else the session's streams as they are now.
    public func setLayoutClassLists(sessionID: String, _ lists: [(streamID: String, classes: [String])]) -> Result<[Stream], UnknownStreams> {
        state.withLock { s in
            let missing = lists.map(\.streamID).filter { s.sessions[sessionID]?.streams[$0] == nil }
            guard missing.isEmpty else { return .failure(UnknownStreams(ids: missing)) }
            for (id, classes) in lists { s.sessions[sessionID]?.streams[id]?.layoutClassList = classes }
            return .success(Self.streams(in: s.sessions[sessionID]?.streams))
        }
    }

    public struct UnknownStreams: Error, Sendable, Equatable {
        public var ids: [String]
    }

    public func connections(sessionID: String) -> [Connection] {
        state.withLock { ($0.sessions[sessionID]?.connections.values).map(Array.init) ?? [] }
    }

    /// Removes a stream and tells everyone else why.
    func unpublish(sessionID: String, streamID: String, reason: DisconnectReason) {
        let (removed, everyone) = state.withLock { s -> (Stream?, [Connection]) in
            let r = s.sessions[sessionID]?.streams.removeValue(forKey: streamID)
            s.sessions[sessionID]?.captionSubscribers[streamID] = nil
            if let relays = s.sessions[sessionID]?.relays { s.sessions[sessionID]?.relays = relays.filter { $0.streamID != streamID } }
            return (r, (s.sessions[sessionID]?.connections.values).map(Array.init) ?? [])
        }
        guard let removed else { return }
        for o in everyone { clients.send(.streamDestroyed(removed, reason: reason), to: o.client) }
        report(.streamDestroyed(removed, sessionID: sessionID, everyone.first { $0.id == removed.connectionID }, reason: reason))
        let bridge = self.bridge
        Task { await bridge.unpublish(sessionID: sessionID, streamID: streamID) }
    }

    // MARK: Leaving

    /// Removes a client's connection and its streams (`video:disconnect`, or its socket closed).
    public func disconnect(client: ClientID, reason: DisconnectReason) {
        guard let (sid, cid) = state.withLock({ $0.byClient.removeValue(forKey: client) }) else { return }
        disconnect(sessionID: sid, connectionID: cid, reason: reason)
    }

    /// Removes a connection and its streams; false when the session has no such connection.
    @discardableResult
    public func disconnect(sessionID: String, connectionID: String, reason: DisconnectReason) -> Bool {
        let streams = state.withLock { s in (s.sessions[sessionID]?.streams.values.filter { $0.connectionID == connectionID }) ?? [] }
        for st in streams { unpublish(sessionID: sessionID, streamID: st.id, reason: reason) }
        endRelays(sessionID: sessionID) { $0.subscriberID == connectionID }
        let (removed, others, last) = state.withLock { s -> (Connection?, [Connection], Bool) in
            let r = s.sessions[sessionID]?.connections.removeValue(forKey: connectionID)
            if let r {
                s.byClient[r.client] = nil
                if let asked = s.sessions[sessionID]?.captionSubscribers {
                    s.sessions[sessionID]?.captionSubscribers = asked.mapValues { $0.subtracting([connectionID]) }
                }
            }
            let others = (s.sessions[sessionID]?.connections.values).map(Array.init) ?? []
            let last = s.sessions[sessionID]?.connections.isEmpty == true
            if last { s.sessions[sessionID] = nil }
            return (r, others, last)
        }
        guard let removed else { return false }
        report(.connectionDestroyed(removed, reason: reason))
        if last { report(.sessionDestroyed(sessionID: sessionID, reason: reason)) }
        let bridge = self.bridge
        Task { await bridge.connectionClosed(sessionID: sessionID, connectionID: connectionID) }
        for o in others { clients.send(.connectionDestroyed(removed, reason: reason), to: o.client) }
        if reason == .forceDisconnected {
            clients.send(.sessionDisconnected(reason: reason), to: removed.client)
        }
        return true
    }

    // MARK: Signals and moderation

    /// Sends a signal to every connection, or to one; false when the target connection does not exist.
    @discardableResult
    public func signal(sessionID: String, to connectionID: String?, from: String?, type: String, data: String) -> Bool {
        let targets = state.withLock { s -> [Connection]? in
            guard let live = s.sessions[sessionID] else { return connectionID == nil ? [] : nil }
            if let connectionID { return live.connections[connectionID].map { [$0] } }
            return Array(live.connections.values)
        }
        guard let targets else { return false }
        for t in targets { clients.send(.signal(type: type, data: data, from: from), to: t.client) }
        return true
    }

    /// Forces a stream's audio off (moderation); everyone sees the property change.
    public func mute(sessionID: String, streamID: String) -> Bool {
        let (stream, everyone) = state.withLock { s -> (Stream?, [Connection]) in
            guard var st = s.sessions[sessionID]?.streams[streamID] else { return (nil, []) }
            guard st.observesForceMute else { return (nil, []) }
            st.hasAudio = false
            s.sessions[sessionID]?.streams[streamID] = st
            return (st, Array(s.sessions[sessionID]!.connections.values))
        }
        guard let stream else { return self.stream(sessionID: sessionID, streamID: streamID) != nil }
        for c in everyone {
            clients.send(.streamPropertyChanged(stream, property: .hasAudio, newValue: false), to: c.client)
            if c.id == stream.connectionID { clients.send(.muteForced(streamID: streamID), to: c.client) }
        }
        let bridge = self.bridge
        Task { await bridge.setAudioMuted(sessionID: sessionID, streamID: streamID, muted: true) }
        return true
    }

    /// The publisher turned its audio or video on or off; everyone else sees the property change.
    func setProperty(sessionID: String, streamID: String, property: StreamProperty, value: Bool) -> Bool {
        let (stream, others) = state.withLock { s -> (Stream?, [Connection]) in
            guard var st = s.sessions[sessionID]?.streams[streamID] else { return (nil, []) }
            if property == .hasAudio { st.hasAudio = value } else { st.hasVideo = value }
            s.sessions[sessionID]?.streams[streamID] = st
            return (st, s.sessions[sessionID]?.connections.values.filter { $0.id != st.connectionID } ?? [])
        }
        guard let stream else { return false }
        for c in others {
            clients.send(.streamPropertyChanged(stream, property: property, newValue: value), to: c.client)
        }
        if property == .hasAudio {
            let bridge = self.bridge
            Task { await bridge.setAudioMuted(sessionID: sessionID, streamID: streamID, muted: !value) }
        }
        return true
    }

    /// Mutes every stream but `excluded`; while `active`, streams published later start muted too.
    public func muteAll(sessionID: String, excluded: Set<String>, active: Bool) {
        state.withLock { s in
            if active { s.forceMuted.insert(sessionID) } else { s.forceMuted.remove(sessionID) }
        }
        guard active else { return }
        for st in streams(sessionID: sessionID) where !excluded.contains(st.id) { _ = mute(sessionID: sessionID, streamID: st.id) }
    }
}
