import Crypto
import Synchronization

/// The media plane as the rest of the server sees it: signaling-agnostic calls to create
/// rooms (routers) and transports, connect them, and produce and consume tracks.
///
/// Each router is pinned to one worker (the least loaded); its transports, producers and
/// consumers live there too, so a room's fan-out never crosses threads. Calls are async
/// and hop to the worker through its mailbox; errors are `MediaError`.
public final class MediaEngine: Sendable {
    public let configuration: MediaConfiguration
    public let certificate: DTLSCertificate
    public let workers: [MediaWorker]
    private let placement = Mutex<Placement>(Placement())

    private struct Placement {
        var next = 0
        var routers: [RouterID: Int] = [:]
        var transports: [TransportID: Int] = [:]
        var producers: [ProducerID: Int] = [:]
        var consumers: [ConsumerID: Int] = [:]
        var mixers: [MixerID: Int] = [:]
    }

    /// Binds one UDP socket per worker and starts the worker threads.
    public init(configuration: MediaConfiguration, certificate: DTLSCertificate? = nil) throws {
        self.configuration = configuration
        let certificate = try certificate ?? DTLSCertificate()
        self.certificate = certificate
        let handler = EventSink()
        var workers: [MediaWorker] = []
        for index in 0..<max(1, configuration.workers) {
            workers.append(try MediaWorker(index: index, configuration: configuration, certificate: certificate) { event in
                handler.deliver(event)
            })
        }
        self.workers = workers
        self.sink = handler
    }

    private let sink: EventSink

    /// Holds the control plane's event handler; workers read it per event.
    final class EventSink: Sendable {
        /// The closure sits inside a struct: a bare function value in generic storage is re-abstracted
        /// on every `inout` access, and each `withLock` would wrap it in two more thunks, so the call
        /// chain (and the stack it needs) would grow with every event delivered.
        private struct Handler { let call: @Sendable (MediaEvent) -> Void }
        private let handler = Mutex<Handler?>(nil)

        func set(_ call: @escaping @Sendable (MediaEvent) -> Void) { handler.withLock { $0 = Handler(call: call) } }
        func deliver(_ event: MediaEvent) { handler.withLock { $0 }?.call(event) }
    }

    /// Receives transport state changes and active-speaker changes, on worker threads.
    public func onEvent(_ handler: @escaping @Sendable (MediaEvent) -> Void) {
        sink.set(handler)
    }

    /// UDP ports of the workers, in worker order.
    public var ports: [UInt16] { workers.map(\.port) }

    public func shutdown() {
        for worker in workers { worker.stop() }
        placement.withLock { $0 = Placement() }
    }

    // MARK: Placement

    func worker(router id: RouterID) throws(MediaError) -> MediaWorker {
        guard let i = placement.withLock({ $0.routers[id] }) else { throw .notFound("router \(id)") }
        return workers[i]
    }

    private func worker(transport id: TransportID) throws(MediaError) -> MediaWorker {
        guard let i = placement.withLock({ $0.transports[id] }) else { throw .notFound("transport \(id)") }
        return workers[i]
    }

    func worker(producer id: ProducerID) throws(MediaError) -> MediaWorker {
        guard let i = placement.withLock({ $0.producers[id] }) else { throw .notFound("producer \(id)") }
        return workers[i]
    }

    private func worker(consumer id: ConsumerID) throws(MediaError) -> MediaWorker {
        guard let i = placement.withLock({ $0.consumers[id] }) else { throw .notFound("consumer \(id)") }
        return workers[i]
    }

    func worker(mixer id: MixerID) throws(MediaError) -> MediaWorker {
        guard let i = placement.withLock({ $0.mixers[id] }) else { throw .notFound("mixer \(id)") }
        return workers[i]
    }

    func place(mixer id: MixerID, output: ProducerID, on index: Int) {
        placement.withLock {
            $0.mixers[id] = index
            $0.producers[output] = index
        }
    }

    func forgetMixer(_ id: MixerID, closed: ClosedObjects) {
        _ = placement.withLock { $0.mixers.removeValue(forKey: id) }
        forget(closed)
    }

    /// Removes ids of closed objects from the placement maps: the one place they leave.
    func forget(_ closed: ClosedObjects) {
        guard !closed.isEmpty else { return }
        placement.withLock { p in
            for id in closed.routers { p.routers.removeValue(forKey: id) }
            for id in closed.transports { p.transports.removeValue(forKey: id) }
            for id in closed.producers { p.producers.removeValue(forKey: id) }
            for id in closed.consumers { p.consumers.removeValue(forKey: id) }
        }
    }

    /// Runs `close` on `worker` and forgets what it reports, plus `named` (the id the caller
    /// closed, in case the worker no longer had it: ids are random and never reused).
    private func close(
        on worker: MediaWorker, named: ClosedObjects, _ close: @escaping @Sendable (WorkerCore) -> ClosedObjects
    ) async throws(MediaError) -> ClosedObjects {
        let closed = try await worker.run { core throws(MediaError) in close(core) }
        var gone = closed
        gone.append(named)
        forget(gone)
        return closed
    }

    // MARK: Routers

    /// Creates a room on the least loaded worker (fewest transports, then fewest routers;
    /// round-robin among equals).
    public func createRouter() async throws(MediaError) -> RouterID {
        let id = RouterID.random()
        let index = placement.withLock { p -> Int in
            var load = [(transports: Int, routers: Int)](repeating: (0, 0), count: workers.count)
            for i in p.transports.values { load[i].transports += 1 }
            for i in p.routers.values { load[i].routers += 1 }
            let start = p.next % workers.count
            var i = start
            for step in 0..<workers.count {
                let j = (start + step) % workers.count
                if load[j].transports < load[i].transports || (load[j].transports == load[i].transports && load[j].routers < load[i].routers) { i = j }
            }
            p.next += 1
            p.routers[id] = i
            return i
        }
        do {
            try await workers[index].run { core throws(MediaError) in core.createRouter(id) }
        } catch {
            forget(ClosedObjects(routers: [id]))
            throw error
        }
        return id
    }

    /// Closes a room: every transport in it, with their producers and consumers.
    @discardableResult
    public func closeRouter(_ id: RouterID) async throws(MediaError) -> ClosedObjects {
        try await close(on: try worker(router: id), named: ClosedObjects(routers: [id])) { $0.closeRouter(id) }
    }

    /// Producers currently in a room (for a late subscriber).
    public func producers(in router: RouterID) async throws(MediaError) -> [(id: ProducerID, kind: MediaKind)] {
        let worker = try worker(router: router)
        let list = try await worker.run { core throws(MediaError) in core.producerList(router).map { ProducerEntry(id: $0.0, kind: $0.1) } }
        return list.map { ($0.id, $0.kind) }
    }

    private struct ProducerEntry: Sendable { var id: ProducerID; var kind: MediaKind }

    // MARK: Transports

    /// A WebRTC transport in `router`: ICE-lite credentials, our candidate and fingerprint.
    public func createWebRtcTransport(router: RouterID) async throws(MediaError) -> TransportInfo {
        let worker = try worker(router: router)
        let id = TransportID.random()
        // Placed before the worker creates it: a close that runs on the worker right after
        // the creation (the router's, say) then finds the id and forgets it.
        placement.withLock { $0.transports[id] = worker.index }
        do {
            return try await worker.run { core throws(MediaError) in try core.createTransport(router: router, transportID: id) }
        } catch {
            forget(ClosedObjects(transports: [id]))
            throw error
        }
    }

    /// Gives the transport the remote DTLS fingerprint and our role; `remoteUsernameFragment`
    /// (from the remote description) restricts which checks are accepted.
    public func connect(transport id: TransportID, dtls: DTLSParameters, remoteUsernameFragment: String?) async throws(MediaError) {
        let worker = try worker(transport: id)
        try await worker.run { core throws(MediaError) in
            try core.connect(id, parameters: dtls, remoteUsernameFragment: remoteUsernameFragment)
        }
    }

    /// Closes a transport with its producers, their consumers on other transports, and its
    /// own consumers.
    @discardableResult
    public func closeTransport(_ id: TransportID) async throws(MediaError) -> ClosedObjects {
        try await close(on: try worker(transport: id), named: ClosedObjects(transports: [id])) { $0.closeTransport(id) }
    }

    public func stats(transport id: TransportID) async throws(MediaError) -> TransportStats {
        let worker = try worker(transport: id)
        return try await worker.run { core throws(MediaError) in try core.stats(id) }
    }

    public func workerStats() async -> [WorkerStats] {
        var out: [WorkerStats] = []
        for worker in workers {
            if let s = try? await worker.run({ core throws(MediaError) in core.workerStats() }) { out.append(s) }
        }
        return out
    }

    // MARK: Bookkeeping

    /// Media objects as the engine's id → worker maps see them and as the workers' tables
    /// hold them. The two agree whenever no call is in flight; a count that does not come
    /// back to its baseline after objects close is a leak.
    public struct ObjectCounts: Sendable, Hashable, Codable {
        public var placement: MediaObjectCounts
        /// Summed over workers.
        public var workers: MediaObjectCounts
        /// Worker routes to transports: ICE username fragments and validated source addresses.
        public var routes: Int
    }

    /// Ids in the placement maps, read without a hop to the workers (cheap enough for metrics).
    public var placementCounts: MediaObjectCounts {
        placement.withLock { p in
            MediaObjectCounts(
                routers: p.routers.count, transports: p.transports.count, producers: p.producers.count, consumers: p.consumers.count)
        }
    }

    public func objectCounts() async -> ObjectCounts {
        let tables = await workerTables()
        return ObjectCounts(
            placement: placementCounts, workers: tables.map(\.objects).reduce(MediaObjectCounts(), +),
            routes: tables.map { $0.usernameFragments + $0.addresses }.reduce(0, +))
    }

    /// Each worker's tables and links, in worker order.
    func workerTables() async -> [WorkerCore.Tables] {
        var out: [WorkerCore.Tables] = []
        for worker in workers {
            if let t = try? await worker.run({ core throws(MediaError) in core.tables() }) { out.append(t) }
        }
        return out
    }

    // MARK: Producers and consumers

    /// Starts receiving a track on `transport`.
    public func produce(transport id: TransportID, parameters: ProducerParameters) async throws(MediaError) -> ProducerID {
        let worker = try worker(transport: id)
        let producerID = ProducerID.random()
        placement.withLock { $0.producers[producerID] = worker.index }
        do {
            try await worker.run { core throws(MediaError) in try core.produce(id, producerID: producerID, parameters: parameters) }
        } catch {
            forget(ClosedObjects(producers: [producerID]))
            throw error
        }
        return producerID
    }

    /// Starts sending `producer` to `transport` (both in the same router).
    public func consume(transport id: TransportID, producer: ProducerID) async throws(MediaError) -> ConsumerParameters {
        let worker = try worker(transport: id)
        let consumerID = ConsumerID.random()
        placement.withLock { $0.consumers[consumerID] = worker.index }
        do {
            return try await worker.run { core throws(MediaError) in try core.consume(id, consumerID: consumerID, producer: producer) }
        } catch {
            forget(ClosedObjects(consumers: [consumerID]))
            throw error
        }
    }

    public func pause(consumer id: ConsumerID) async throws(MediaError) {
        try await worker(consumer: id).run { core throws(MediaError) in try core.setPaused(consumer: id, true) }
    }

    /// Resumes a consumer; video restarts at a key frame, requested now.
    public func resume(consumer id: ConsumerID) async throws(MediaError) {
        try await worker(consumer: id).run { core throws(MediaError) in try core.setPaused(consumer: id, false) }
    }

    /// Sends a video consumer's retransmissions over its RTX stream (the subscriber accepted it)
    /// or on its primary SSRC.
    public func setRetransmissionStream(consumer id: ConsumerID, enabled: Bool) async throws(MediaError) {
        try await worker(consumer: id).run { core throws(MediaError) in try core.setRetransmissionStream(consumer: id, enabled) }
    }

    /// A simulcast subscriber's preferred picture size (0 × 0: the largest layer): it gets the smallest
    /// layer the publisher sends at least that large, else the largest. No effect on other consumers.
    public func setPreferredSize(consumer id: ConsumerID, width: Int, height: Int) async throws(MediaError) {
        try await worker(consumer: id).run { core throws(MediaError) in try core.setPreferredSize(consumer: id, width: width, height: height) }
    }

    /// A subscriber's preferred frame rate (0: every frame): of a stream sent in temporal layers (VP8's), it gets
    /// the fewest layers that make that rate, else all of them. No effect on other consumers.
    public func setPreferredFrameRate(consumer id: ConsumerID, _ rate: Double) async throws(MediaError) {
        try await worker(consumer: id).run { core throws(MediaError) in try core.setPreferredFrameRate(consumer: id, rate) }
    }

    /// The Video API's subscriber audio fallback for a video consumer: its video turned off while the subscriber's
    /// receiver reports say its link loses too much of it, and tried again now and then (`MediaEvent.audioFallback`).
    public func setAudioFallback(consumer id: ConsumerID, _ on: Bool) async throws(MediaError) {
        try await worker(consumer: id).run { core throws(MediaError) in try core.setAudioFallback(consumer: id, on) }
    }

    /// Turns the Video API's publisher audio fallback on or off for a video producer's track: its publisher is told to
    /// stop sending the video while what reaches the server of it loses too much, and to try it again now and then
    /// (`MediaEvent.publisherAudioFallback`); the track's subscribers are told the video went off and came back.
    public func setPublisherAudioFallback(producer id: ProducerID, _ on: Bool) async throws(MediaError) {
        try await worker(producer: id).run { core throws(MediaError) in try core.setPublisherAudioFallback(producer: id, on) }
    }

    /// Feeds a consumer from another producer (same kind and codec) without renegotiation.
    public func switchConsumer(_ id: ConsumerID, to producer: ProducerID) async throws(MediaError) {
        try await worker(consumer: id).run { core throws(MediaError) in try core.switchConsumer(id, to: producer) }
    }

    public func pause(producer id: ProducerID) async throws(MediaError) {
        try await worker(producer: id).run { core throws(MediaError) in try core.setPaused(producer: id, true) }
    }

    public func resume(producer id: ProducerID) async throws(MediaError) {
        try await worker(producer: id).run { core throws(MediaError) in try core.setPaused(producer: id, false) }
    }

    /// Closes a producer and its consumers on every transport.
    @discardableResult
    public func closeProducer(_ id: ProducerID) async throws(MediaError) -> ClosedObjects {
        try await close(on: try worker(producer: id), named: ClosedObjects(producers: [id])) { $0.closeProducer(id) }
    }

    @discardableResult
    public func closeConsumer(_ id: ConsumerID) async throws(MediaError) -> ClosedObjects {
        try await close(on: try worker(consumer: id), named: ClosedObjects(consumers: [id])) { $0.closeConsumer(id) }
    }
}
