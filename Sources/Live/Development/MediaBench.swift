import Media
import Synchronization

/// Rooms addressed by name, with no signaling, members or authentication: what the development-only
/// `/test/media/*` routes drive for interop tests and the load generator. A room is a router made on
/// first use; a subscription waits here for its answer.
public final class MediaBench: Sendable {
    let engine: MediaEngine
    let rooms = Mutex<[String: RouterID]>([:])
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

    /// A publishing transport in the named room, from the client's offer.
    public func publish(room: String, offer: String) async throws(LiveError) -> MediaEngine.Publication {
        let router = try await router(named: room)
        do {
            let publication = try await engine.publish(router: router, offer: offer)
            owned.withLock { $0[publication.transport] = room }
            return publication
        } catch { throw .media(error) }
    }

    /// A subscribing transport to everything in the named room; it waits for `answer`.
    public func subscribe(room: String) async throws(LiveError) -> MediaEngine.Subscription {
        let router = try await router(named: room)
        do {
            let subscription = try await engine.subscribe(router: router)
            owned.withLock { $0[subscription.transport] = room }
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
        do { _ = try await engine.closeTransport(id) } catch { throw .media(error) }
        if let room { await releaseIfEmpty(room) }
    }

    /// A named room's router goes with its last bench transport; load runs name a fresh room each time.
    func releaseIfEmpty(_ room: String) async {
        let router: RouterID? = owned.withLock { owned in
            guard !owned.values.contains(room) else { return nil }
            return rooms.withLock { $0.removeValue(forKey: room) }
        }
        if let router { _ = try? await engine.closeRouter(router) }
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
