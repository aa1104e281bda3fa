import Media
import Synchronization

/// Rooms addressed by name, with no signaling, members or authentication: what the development-only
/// `/test/media/*` routes drive for interop tests and the load generator. A room is a router made on
/// first use; a subscription waits here for its answer.
///
/// A room made with `mode: .mixed` also gets a mixer, wired as a mixed conversation room wires it:
/// every published audio track is a mixer participant speaking into it, every subscriber consumes
/// only the mix and is a participant of its own (or, named as a publisher's `speaker`, hears that
/// publisher's mix-minus: one leg that both speaks and listens). The mode is fixed when the room is
/// made; later requests follow the room.
public final class MediaBench: Sendable {
    let engine: MediaEngine
    let rooms = Mutex<[String: RouterID]>([:])
    /// Mixers of the mixed rooms, by room name.
    let mixers = Mutex<[String: MediaEngine.MixerInfo]>([:])
    /// Mixer participants made for bench transports, removed when the transport closes.
    let participants = Mutex<[TransportID: [MixerParticipantID]]>([:])
    let pending = Mutex<[TransportID: MediaEngine.Subscription]>([:])
    /// Transports made here and not closed yet: a client that vanishes without DELETE leaves them behind
    /// until consent expires (see `transportFailed`).
    let owned = Mutex<[TransportID: String]>([:])

    public init(engine: MediaEngine) {
        self.engine = engine
    }

    /// The named room's router; two first requests that race keep the first router.
    func router(named name: String) async throws(LiveError) -> RouterID {
        do {
            return try await engine.findOrCreateRouter(existing: { rooms.withLock { $0[name] } }, keep: { id in
                rooms.withLock { rooms -> RouterID in
                    if let existing = rooms[name] { return existing }
                    rooms[name] = id
                    return id
                }
            })
        } catch { throw .media(error) }
    }

    /// The mixer of a mixed room, made with the room (`mode` and `capacity`, its participants at most,
    /// count only for a room's first request).
    func mixer(room name: String, router: RouterID, mode: RoomMode?, capacity: Int?) async throws(LiveError) -> MediaEngine.MixerInfo? {
        if let existing = mixers.withLock({ $0[name] }) { return existing }
        guard mode == .mixed else { return nil }
        let made: MediaEngine.MixerInfo
        do { made = try await engine.createMixer(router: router, capacity: capacity ?? 256) } catch { throw .media(error) }
        let kept = mixers.withLock { mixers -> MediaEngine.MixerInfo in
            if let existing = mixers[name] { return existing }
            mixers[name] = made
            return made
        }
        if kept != made { _ = try? await engine.closeMixer(made.id) }
        return kept
    }

    /// A publishing transport in the named room, from the client's offer. In a mixed room its audio
    /// tracks speak into the mixer as participant `<transport id>`.
    public func publish(room: String, offer: String, mode: RoomMode? = nil, capacity: Int? = nil) async throws(LiveError) -> MediaEngine.Publication {
        let router = try await router(named: room)
        let mixer = try await mixer(room: room, router: router, mode: mode, capacity: capacity)
        do {
            let publication = try await engine.publish(router: router, offer: offer)
            owned.withLock { $0[publication.transport] = room }
            if let mixer {
                for (producer, parameters) in publication.producers where parameters.kind == .audio {
                    let participant = MixerParticipantID(publication.transport.rawValue)
                    try await engine.addMixerParticipant(mixer.id, participant, source: .producer(producer))
                    participants.withLock { $0[publication.transport, default: []].append(participant) }
                }
            }
            return publication
        } catch { throw .media(error) }
    }

    /// A subscribing transport to everything in the named room (in a mixed room: to the mix); it
    /// waits for `answer`. In a mixed room the subscriber hears as `speaker` (a publishing transport
    /// of the room: its mix-minus while it is mixed), or as a listening participant of its own.
    public func subscribe(room: String, mode: RoomMode? = nil, capacity: Int? = nil,
                          speaker: TransportID? = nil) async throws(LiveError) -> MediaEngine.Subscription {
        let router = try await router(named: room)
        let mixer = try await mixer(room: room, router: router, mode: mode, capacity: capacity)
        do {
            let subscription = try await engine.subscribe(router: router, producers: mixer.map { [$0.output] })
            owned.withLock { $0[subscription.transport] = room }
            if let mixer, let consumer = subscription.consumers.first {
                let participant: MixerParticipantID
                if let speaker {
                    participant = MixerParticipantID(speaker.rawValue)
                } else {
                    participant = MixerParticipantID(subscription.transport.rawValue)
                    try await engine.addMixerParticipant(mixer.id, participant, source: .none)
                    participants.withLock { $0[subscription.transport, default: []].append(participant) }
                }
                try await engine.bindMixerOutput(mixer.id, consumer: consumer.id, to: participant)
            }
            pending.withLock { $0[subscription.transport] = subscription }
            return subscription
        } catch { throw .media(error) }
    }

    /// The client's answer to a subscription's offer.
    public func answer(transport id: TransportID, sdp: String) async throws(LiveError) {
        guard let subscription = pending.withLock({ $0.removeValue(forKey: id) }) else { throw .noPendingSubscription(id) }
        do { try await engine.completeSubscription(subscription, answer: sdp) } catch { throw .media(error) }
    }

    public func stats(transport id: TransportID) async throws(LiveError) -> TransportStats {
        do { return try await engine.stats(transport: id) } catch { throw .media(error) }
    }

    public func close(transport id: TransportID) async throws(LiveError) {
        pending.withLock { $0[id] = nil }
        let room = owned.withLock { $0.removeValue(forKey: id) }
        if let room, let mixer = mixers.withLock({ $0[room] }) {
            for participant in participants.withLock({ $0.removeValue(forKey: id) }) ?? [] {
                _ = try? await engine.removeMixerParticipant(mixer.id, participant)
            }
        }
        do { _ = try await engine.closeTransport(id) } catch { throw .media(error) }
        if let room { await releaseIfEmpty(room) }
    }

    /// A named room's router goes with its last bench transport; load runs name a fresh room each time.
    func releaseIfEmpty(_ room: String) async {
        let router: RouterID? = owned.withLock { owned in
            guard !owned.values.contains(room) else { return nil }
            return rooms.withLock { $0.removeValue(forKey: room) }
        }
        guard let router else { return }
        if let mixer = mixers.withLock({ $0.removeValue(forKey: room) }) { _ = try? await engine.closeMixer(mixer.id) }
        _ = try? await engine.closeRouter(router)
    }

    /// A bench transport whose ICE consent expired (or whose DTLS failed) is closed: there is no member or
    /// socket here whose departure would close it, so without this every load run that ends without
    /// DELETE (a killed generator, a crashed test) would leave its transports, producers and consumers in
    /// the engine for the life of the process. Returns the close, for tests to await.
    @discardableResult
    func transportFailed(_ id: TransportID) -> Task<Void, Never>? {
        guard owned.withLock({ $0[id] != nil }) else { return nil }
        return Task { try? await close(transport: id) }
    }

    public func workerStats() async -> [WorkerStats] {
        await engine.workerStats()
    }
}

extension MediaBench {
    /// How late the workers' ticks ran; `reset` starts a new window after reading.
    public func tickLateness(reset: Bool) async -> [MediaEngine.TickLateness] {
        await engine.tickLateness(reset: reset)
    }
}
