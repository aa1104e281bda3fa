import Media
import Synchronization

/// Video sessions on the SFU: one router per session (so a session's media stays on one worker),
/// one publishing transport per stream, one subscribing transport per (stream, subscriber).
///
/// Codec pass-through, NACK/RTX and the key frame request on subscribe are the engine's; this
/// type only maps the hub's session/stream/connection ids onto routers, transports and producers.
/// While a session has audio connectors it has one mix on its router: every stream's audio producer speaks
/// into it (earmuffed: no mix is made for a stream) and each connector is a port hearing its streams (all, or
/// those it named: `canHear`), so a stream is decoded once however many connectors take it. A bidirectional
/// connector's own audio is a stream of the session too: its subscribers consume the mix's output as a
/// participant that hears only that connector (its "voice"), so they get its audio alone.
public final class EngineVideoMediaBridge: VideoMediaBridge {
    let engine: MediaEngine
    let state = Mutex(State())

    struct SubscriptionKey: Hashable {
        var stream: String
        var subscriber: String
    }

    struct Published {
        var transport: TransportID
        var producers: [(id: ProducerID, kind: MediaKind)]
        /// Whether its subscribers' links are judged by the audio fallback.
        var subscriberFallback = true
    }

    struct Room {
        var router: RouterID
        var streams: [String: Published] = [:]
        var subscriptions: [SubscriptionKey: MediaEngine.Subscription] = [:]
        /// The connection ids of the session's audio connectors, and their mix (made with the first of them).
        var connectors: Set<String> = []
        var audioMix: MediaEngine.MixerInfo?
        /// Bidirectional connectors' streams: stream id → the connector's connection id.
        var voices: [String: String] = [:]
        var isEmpty: Bool { streams.isEmpty && subscriptions.isEmpty && connectors.isEmpty }
    }

    struct State {
        var rooms: [String: Room] = [:]
    }

    public init(engine: MediaEngine) {
        self.engine = engine
    }

    /// The session's router, created on first use; two racing first calls keep one router.
    func router(for sessionID: String) async throws(MediaError) -> RouterID {
        try await engine.findOrCreateRouter(existing: { state.withLock { $0.rooms[sessionID]?.router } }, keep: { id in
            state.withLock { s -> RouterID in
                if let existing = s.rooms[sessionID] { return existing.router }
                s.rooms[sessionID] = Room(router: id)
                return id
            }
        })
    }

    public func publish(sessionID: String, streamID: String, offer: String) async throws(MediaError) -> String {
        let router = try await router(for: sessionID)
        let publication: MediaEngine.Publication
        do {
            publication = try await engine.publish(router: router, offer: offer)
        } catch {
            await closeRoomIfEmpty(sessionID)
            throw error
        }
        let published = Published(transport: publication.transport, producers: publication.producers.map { ($0.id, $0.parameters.kind) })
        let (kept, stale, mix) = state.withLock { s -> (Bool, Published?, MediaEngine.MixerInfo?) in
            // The room may have been closed (last stream gone) while the transport was being made.
            guard let room = s.rooms[sessionID], room.router == router else { return (false, nil, nil) }
            let old = room.streams[streamID]
            s.rooms[sessionID]?.streams[streamID] = published
            return (true, old, room.audioMix)
        }
        if let stale { await close(stale) }
        guard kept else {
            await close(published)
            throw MediaError.notFound("session \(sessionID) media closed during publish")
        }
        if let mix { await addInput(streamID, published, to: mix.id) }
        return publication.answer
    }

    public func subscribe(sessionID: String, streamID: String, subscriberID: String) async throws(MediaError) -> String {
        let key = SubscriptionKey(stream: streamID, subscriber: subscriberID)
        /// A published stream's producers, or a connector's voice: the mix's output as that connector's voice hears it.
        enum Source { case producers([ProducerID]), voice(MediaEngine.MixerInfo, connection: String) }
        guard let (router, source, previous) = state.withLock({ s -> (RouterID, Source, MediaEngine.Subscription?)? in
            guard let room = s.rooms[sessionID] else { return nil }
            let source: Source
            if let published = room.streams[streamID] {
                source = .producers(published.producers.map(\.id))
            } else if let connection = room.voices[streamID], let mix = room.audioMix {
                source = .voice(mix, connection: connection)
            } else {
                return nil
            }
            return (room.router, source, s.rooms[sessionID]?.subscriptions.removeValue(forKey: key))
        }) else {
            throw MediaError.notFound("stream \(streamID) has no media yet")
        }
        if let previous { await close(previous) }
        let subscription: MediaEngine.Subscription
        switch source {
        case .producers(let producers):
            subscription = try await engine.subscribe(router: router, producers: producers)
            // The Video API's subscribers fall back to audio on a link losing too much of the video, unless the
            // publisher or they say not.
            if subscriberFallback(sessionID, streamID) {
                for consumer in subscription.consumers where consumer.kind == .video { try? await engine.setAudioFallback(consumer: consumer.id, true) }
            }
        case .voice(let mix, let connection):
            subscription = try await engine.subscribe(router: router, producers: [mix.output])
            for consumer in subscription.consumers { try? await engine.bindMixerOutput(mix.id, consumer: consumer.id, to: Self.voice(connection)) }
        }
        let kept = state.withLock { s -> Bool in
            // The stream may have gone while the transport was being made.
            guard s.rooms[sessionID]?.streams[streamID] != nil || s.rooms[sessionID]?.voices[streamID] != nil else { return false }
            s.rooms[sessionID]?.subscriptions[key] = subscription
            return true
        }
        guard kept else {
            await close(subscription)
            throw MediaError.notFound("stream \(streamID) ended")
        }
        return subscription.offer
    }

    public func completeSubscription(sessionID: String, streamID: String, subscriberID: String, answer: String) async throws(MediaError) {
        let key = SubscriptionKey(stream: streamID, subscriber: subscriberID)
        guard let subscription = state.withLock({ $0.rooms[sessionID]?.subscriptions[key] }) else {
            throw MediaError.notFound("no subscription to \(streamID) waits for an answer")
        }
        try await engine.completeSubscription(subscription, answer: answer)
    }

    public func setPreferences(sessionID: String, streamID: String, subscriberID: String, _ preferences: SubscriberPreferences) async throws(MediaError) {
        let key = SubscriptionKey(stream: streamID, subscriber: subscriberID)
        guard let subscription = state.withLock({ $0.rooms[sessionID]?.subscriptions[key] }) else {
            throw MediaError.notFound("no subscription to \(streamID)")
        }
        // A consumer the answer rejected is gone; the others take the preferences (a size only simulcast ones act
        // on, a frame rate only those whose stream has temporal layers).
        let fallbackAllowed = subscriberFallback(sessionID, streamID)
        for consumer in subscription.consumers {
            if let on = consumer.kind == .audio ? preferences.audio : preferences.video {
                if on { try? await engine.resume(consumer: consumer.id) } else { try? await engine.pause(consumer: consumer.id) }
            }
            guard consumer.kind == .video else { continue }
            if let on = preferences.audioFallback { try? await engine.setAudioFallback(consumer: consumer.id, on && fallbackAllowed) }
            if let width = preferences.width, let height = preferences.height {
                try? await engine.setPreferredSize(consumer: consumer.id, width: width, height: height)
            }
            if let rate = preferences.frameRate { try? await engine.setPreferredFrameRate(consumer: consumer.id, rate) }
        }
    }

    public func setAudioFallback(sessionID: String, streamID: String, _ fallback: AudioFallbackSettings) async {
        guard let published = state.withLock({ s -> Published? in
            s.rooms[sessionID]?.streams[streamID]?.subscriberFallback = fallback.subscriber
            return s.rooms[sessionID]?.streams[streamID]
        }) else { return }
        for producer in published.producers where producer.kind == .video {
            try? await engine.setPublisherAudioFallback(producer: producer.id, fallback.publisher)
        }
    }

    func subscriberFallback(_ sessionID: String, _ streamID: String) -> Bool {
        state.withLock { $0.rooms[sessionID]?.streams[streamID]?.subscriberFallback ?? true }
    }

    public func unpublish(sessionID: String, streamID: String) async {
        let (published, subscriptions, mix) = state.withLock { s -> (Published?, [MediaEngine.Subscription], MediaEngine.MixerInfo?) in
            let published = s.rooms[sessionID]?.streams.removeValue(forKey: streamID)
            s.rooms[sessionID]?.voices[streamID] = nil
            var gone: [MediaEngine.Subscription] = []
            for (key, sub) in s.rooms[sessionID]?.subscriptions ?? [:] where key.stream == streamID {
                gone.append(sub)
                s.rooms[sessionID]?.subscriptions[key] = nil
            }
            return (published, gone, s.rooms[sessionID]?.audioMix)
        }
        if let mix, published != nil { try? await engine.removeMixerParticipant(mix.id, Self.input(streamID)) }
        for sub in subscriptions { await close(sub) }
        if let published { await close(published) }
        await closeRoomIfEmpty(sessionID)
    }

    public func unsubscribe(sessionID: String, streamID: String, subscriberID: String) async {
        let key = SubscriptionKey(stream: streamID, subscriber: subscriberID)
        if let sub = state.withLock({ $0.rooms[sessionID]?.subscriptions.removeValue(forKey: key) }) { await close(sub) }
        await closeRoomIfEmpty(sessionID)
    }

    public func connectionClosed(sessionID: String, connectionID: String) async {
        let subscriptions = state.withLock { s -> [MediaEngine.Subscription] in
            var gone: [MediaEngine.Subscription] = []
            for (key, sub) in s.rooms[sessionID]?.subscriptions ?? [:] where key.subscriber == connectionID {
                gone.append(sub)
                s.rooms[sessionID]?.subscriptions[key] = nil
            }
            return gone
        }
        for sub in subscriptions { await close(sub) }
        await releaseConnector(sessionID, connectionID)
        await closeRoomIfEmpty(sessionID)
    }

    // MARK: Audio connectors

    public func connectAudio(sessionID: String, connectionID: String, streams: Set<String>?, voice: String?,
                             make: @escaping MixerPortFactory) async throws(MediaError) {
        let router = try await router(for: sessionID)
        // Counted first, so the mix stays while it is being joined.
        guard state.withLock({ $0.rooms[sessionID]?.router == router && $0.rooms[sessionID]?.connectors.insert(connectionID).inserted == true }) else {
            await closeRoomIfEmpty(sessionID)
            throw .notFound("session \(sessionID) media closed while its audio connector started")
        }
        do {
            let mix = try await audioMix(sessionID, router: router).id
            let options = MixerParticipantOptions(canHear: streams.map { $0.map(Self.input) })
            try await engine.addMixerPort(mix, Self.port(connectionID), options: options, make: make)
            if let voice {
                // Hears the connector alone; its stream's subscribers are bound to it.
                try await engine.addMixerParticipant(mix, Self.voice(connectionID), source: .none, options: Self.voiceOptions(connectionID))
                state.withLock { $0.rooms[sessionID]?.voices[voice] = connectionID }
            }
        } catch {
            await releaseConnector(sessionID, connectionID)
            await closeRoomIfEmpty(sessionID)
            throw error
        }
        // The connection may have closed meanwhile (and been released before its port was there).
        let (gone, mix) = state.withLock { ($0.rooms[sessionID]?.connectors.contains(connectionID) != true, $0.rooms[sessionID]?.audioMix) }
        if gone, let mix { await leave(mix.id, connectionID) }
    }

    public func holdMix(sessionID: String, holder: String, hearing: Set<String>?) async throws(MediaError) -> HeldMix {
        let router = try await router(for: sessionID)
        guard state.withLock({ $0.rooms[sessionID]?.router == router && $0.rooms[sessionID]?.connectors.insert(holder).inserted == true }) else {
            await closeRoomIfEmpty(sessionID)
            throw .notFound("session \(sessionID) media closed while its mix was asked for")
        }
        do {
            let mix = try await audioMix(sessionID, router: router).id
            guard let hearing else { return HeldMix(mixer: mix, listener: nil) }
            // It listens as a connector's port would, without a socket (and leaves the mix as one does).
            let listener = Self.port(holder)
            try await engine.addMixerParticipant(mix, listener, source: .none, options: hearingOptions(sessionID, hearing))
            return HeldMix(mixer: mix, listener: listener)
        } catch {
            await releaseMix(sessionID: sessionID, holder: holder)
            throw error
        }
    }

    public func setMixHearing(sessionID: String, holder: String, streams: Set<String>) async throws(MediaError) {
        guard let mix = state.withLock({ s in s.rooms[sessionID]?.connectors.contains(holder) == true ? s.rooms[sessionID]?.audioMix : nil }) else {
            throw .notFound("\(holder) holds no mix of session \(sessionID)")
        }
        try await engine.setMixerOptions(mix.id, Self.port(holder), hearingOptions(sessionID, streams))
    }

    /// Hears these streams: a published stream's audio input, or the port a bidirectional connector speaks
    /// through for its stream.
    func hearingOptions(_ sessionID: String, _ streams: Set<String>) -> MixerParticipantOptions {
        let voices = state.withLock { $0.rooms[sessionID]?.voices ?? [:] }
        return MixerParticipantOptions(canHear: streams.sorted().map { voices[$0].map(Self.port) ?? Self.input($0) })
    }

    public func releaseMix(sessionID: String, holder: String) async {
        await releaseConnector(sessionID, holder)
        await closeRoomIfEmpty(sessionID)
    }

    /// The session's audio mix, made with every stream's audio in it when the first connector needs it.
    func audioMix(_ sessionID: String, router: RouterID) async throws(MediaError) -> MediaEngine.MixerInfo {
        if let mix = state.withLock({ $0.rooms[sessionID]?.audioMix }) { return mix }
        let made = try await engine.createMixer(router: router, capacity: Self.audioMixCapacity,
                                                maxSpeakers: VideoHub.Limits.audioConnectorStreams)
        let (kept, streams) = state.withLock { s -> (MediaEngine.MixerInfo?, [String: Published]) in
            guard let room = s.rooms[sessionID], room.router == router, !room.connectors.isEmpty else { return (nil, [:]) }
            if let mix = room.audioMix { return (mix, [:]) }
            s.rooms[sessionID]?.audioMix = made
            return (made, room.streams)
        }
        if kept != made { _ = try? await engine.closeMixer(made.id) }
        guard let kept else { throw .notFound("session \(sessionID) has no audio connector any more") }
        for (streamID, published) in streams { await addInput(streamID, published, to: kept.id) }
        return kept
    }

    /// Streams and connectors one session's audio mix holds.
    static let audioMixCapacity = 128

    /// A connector leaves the session's mix (its port closes, and with it the socket); the last one closes the mix.
    func releaseConnector(_ sessionID: String, _ connectionID: String) async {
        let (mix, last) = state.withLock { s -> (MediaEngine.MixerInfo?, Bool) in
            guard s.rooms[sessionID]?.connectors.remove(connectionID) != nil, let mix = s.rooms[sessionID]?.audioMix else { return (nil, false) }
            let last = s.rooms[sessionID]?.connectors.isEmpty ?? true
            if last { s.rooms[sessionID]?.audioMix = nil }
            return (mix, last)
        }
        guard let mix else { return }
        if last { _ = try? await engine.closeMixer(mix.id) } else { await leave(mix.id, connectionID) }
    }

    /// A connector's participants leave the mix: its port (which closes the socket) and its voice, if any.
    func leave(_ mix: MixerID, _ connectionID: String) async {
        try? await engine.removeMixerParticipant(mix, Self.port(connectionID))
        try? await engine.removeMixerParticipant(mix, Self.voice(connectionID))
    }

    /// The mixer participants a stream's audio speaks as, a connector's port hears (and, bidirectional, speaks)
    /// as, and the one a bidirectional connector's stream is heard through.
    static func input(_ streamID: String) -> MixerParticipantID { MixerParticipantID("s" + streamID) }
    static func port(_ connectionID: String) -> MixerParticipantID { MixerParticipantID("c" + connectionID) }
    static func voice(_ connectionID: String) -> MixerParticipantID { MixerParticipantID("v" + connectionID) }

    /// A connector's voice hears the connector alone; muted (a force mute of its stream), nothing.
    static func voiceOptions(_ connectionID: String, muted: Bool = false) -> MixerParticipantOptions {
        MixerParticipantOptions(earmuffed: muted, canHear: [port(connectionID)])
    }

    /// A stream's audio producer speaks into a connector's mix; it hears nothing, so no mix is made for it.
    /// A stream without audio, or one that ended meanwhile, adds nothing.
    func addInput(_ streamID: String, _ published: Published, to mixer: MixerID) async {
        guard let audio = published.producers.first(where: { $0.kind == .audio })?.id else { return }
        try? await engine.addMixerParticipant(mixer, Self.input(streamID), source: .producer(audio),
                                              options: MixerParticipantOptions(earmuffed: true))
    }

    /// Pauses the audio producers, so no subscriber gets the muted publisher's audio; a connector's voice goes
    /// silent for its subscribers instead.
    public func tapStream(sessionID: String, streamID: String, tap: ProducerTapID, kinds: Set<MediaKind>) async throws(MediaError) -> [StreamTap] {
        let producers = state.withLock { $0.rooms[sessionID]?.streams[streamID]?.producers } ?? []
        var taps: [StreamTap] = []
        for (id, kind) in producers where kinds.contains(kind) {
            do {
                try await engine.addProducerTap(id, tap, packets: kind == .audio ? 256 : 1_024)
            } catch {
                for t in taps { await untap(t) }
                throw error
            }
            taps.append(StreamTap(producer: id, kind: kind, id: tap))
        }
        return taps
    }

    public func drain(_ tap: StreamTap) async throws(MediaError) -> ProducerTapPackets {
        try await engine.drainProducerTap(tap.producer, tap.id)
    }

    public func requestKeyframe(_ tap: StreamTap) async { try? await engine.requestKeyframe(producer: tap.producer) }

    public func untap(_ tap: StreamTap) async { await engine.removeProducerTap(tap.producer, tap.id) }

    public func subscription(of consumer: ConsumerID) -> (sessionID: String, streamID: String, subscriberID: String)? {
        state.withLock { s in
            for (sessionID, room) in s.rooms {
                if let key = room.subscriptions.first(where: { $0.value.consumers.contains { $0.id == consumer } })?.key {
                    return (sessionID, key.stream, key.subscriber)
                }
            }
            return nil
        }
    }

    public func stream(of producer: ProducerID) -> (sessionID: String, streamID: String)? {
        state.withLock { s in
            for (sessionID, room) in s.rooms {
                if let streamID = room.streams.first(where: { $0.value.producers.contains { $0.id == producer } })?.key { return (sessionID, streamID) }
            }
            return nil
        }
    }

    public func setAudioMuted(sessionID: String, streamID: String, muted: Bool) async {
        let (audio, voice) = state.withLock { s -> ([ProducerID], (MixerID, String)?) in
            let room = s.rooms[sessionID]
            let voice = room?.voices[streamID].flatMap { connection in room?.audioMix.map { ($0.id, connection) } }
            return (room?.streams[streamID]?.producers.filter { $0.kind == .audio }.map(\.id) ?? [], voice)
        }
        if let (mix, connection) = voice { try? await engine.setMixerOptions(mix, Self.voice(connection), Self.voiceOptions(connection, muted: muted)) }
        for id in audio {
            if muted { try? await engine.pause(producer: id) } else { try? await engine.resume(producer: id) }
        }
    }

    /// Transport ids of a stream's publisher and subscribers (for stats and tests).
    public func transports(sessionID: String, streamID: String) -> (publisher: TransportID?, subscribers: [String: TransportID]) {
        state.withLock { s in
            let room = s.rooms[sessionID]
            var subs: [String: TransportID] = [:]
            for (key, sub) in room?.subscriptions ?? [:] where key.stream == streamID { subs[key.subscriber] = sub.transport }
            return (room?.streams[streamID]?.transport, subs)
        }
    }

    /// Number of sessions holding a router (a session with no media holds none).
    public var activeRouters: Int { state.withLock { $0.rooms.count } }

    /// Closing the transport closes its producers and every consumer of them.
    func close(_ published: Published) async {
        _ = try? await engine.closeTransport(published.transport)
    }

    /// Closing the transport closes its consumers.
    func close(_ subscription: MediaEngine.Subscription) async {
        _ = try? await engine.closeTransport(subscription.transport)
    }

    func closeRoomIfEmpty(_ sessionID: String) async {
        let router = state.withLock { s -> RouterID? in
            guard let room = s.rooms[sessionID], room.isEmpty else { return nil }
            s.rooms[sessionID] = nil
            return room.router
        }
        if let router { _ = try? await engine.closeRouter(router) }
    }
}
