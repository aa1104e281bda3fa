import CShims
import Crypto
import Glibc
import Runtime
import Wire

/// Everything one media worker owns, touched only on its loop thread: the UDP socket, the
/// batch buffers, the routing maps, routers, transports, producers and consumers.
///
/// The receive path per batch: `recvmmsg` into preallocated slots, demultiplex each
/// datagram by its first byte (RFC 7983), route STUN by USERNAME and everything else by
/// source address, and flush whatever the batch produced with `sendmmsg`.
final class WorkerCore: Selectable {
    let index: Int
    let loop: EventLoop
    let socket: UDPSocket
    let queue: SendQueue
    let certificate: DTLSCertificate
    let configuration: MediaConfiguration
    let ntp: NTPTime
    let events: @Sendable (MediaEvent) -> Void
    private let receiveBatch = DatagramBatch(capacity: 64, stride: 2048)
    /// The batch's packets for subscribers, fanned out when the batch is processed (`Producer.receive`).
    let fanout = FanoutBatch(capacity: 64)
    /// Monotonic time of the batch being processed.
    private(set) var now: UInt64

    private(set) var byUsernameFragment: [String: WebRTCTransport] = [:]
    private(set) var byAddress: [PeerAddress: WebRTCTransport] = [:]
    var routers: [RouterID: Router] = [:]
    var transports: [TransportID: WebRTCTransport] = [:]
    /// `transports` in the order the tick visits them, and when each next has a timer due (see
    /// `WebRTCTransport.tick`): the tick reads this array and calls only the transports due.
    private(set) var tickList: [WebRTCTransport] = []
    private(set) var tickDue: [UInt64] = []
    var producers: [ProducerID: Producer] = [:]
    var consumers: [ConsumerID: Consumer] = [:]
    var mixers: [MixerID: Mixer] = [:]
    /// `mixers` as a list for the tick (rebuilt when a mixer comes or goes).
    var mixerList: [Mixer] = []
    /// Deadline of the next 20 ms tick; ticks are scheduled against it so they do not drift.
    private var nextTick: UInt64 = 0
    /// Keeps the tick just after the arrivals of the biggest mixer's loudest speaker, and the move it
    /// asked of the next deadline.
    private(set) var phase = TickPhase()
    private var phaseStep: Int64 = 0
    /// The input the tick follows (the biggest mixer's loudest speaker), and whether the tick due at
    /// `nextTick` already ran, early, when that input's packet came.
    private var tickPacer: RTPMixerInput?
    private var tickRanEarly = false
    /// Ticks run as soon as the followed speaker's packet came, ahead of their deadline.
    private(set) var earlyTicks: UInt64 = 0
    private var tickCount: UInt64 = 0
    /// How late each tick ran behind its deadline, nanoseconds.
    private(set) var tickLateness = LatencyHistogram(bucketNanoseconds: 10_000, buckets: 10_000)
    /// What the worker's thread asked for and got (`MediaConfiguration.threadNice`).
    var threadPriority = ThreadPriority(requested: nil, nice: sb_thread_nice(), error: 0)

    /// How long each tick's own work took, and each receive pass (`handle(events:)`), nanoseconds: a late
    /// tick either waited behind one of these on its own thread, or for a CPU.
    private(set) var tickWork = LatencyHistogram(bucketNanoseconds: 10_000, buckets: 10_000)
    private(set) var receiveWork = LatencyHistogram(bucketNanoseconds: 10_000, buckets: 10_000)

    /// Starts the lateness histograms again (a benchmark's measured window).
    func resetTickLateness() {
        tickLateness = LatencyHistogram(bucketNanoseconds: 10_000, buckets: 10_000)
        tickWork = LatencyHistogram(bucketNanoseconds: 10_000, buckets: 10_000)
        receiveWork = LatencyHistogram(bucketNanoseconds: 10_000, buckets: 10_000)
        earlyTicks = 0
        phase.resetCounts()
    }
    private var seed: UInt64

    // Counters for stats and the benchmark.
    private(set) var datagramsIn: UInt64 = 0
    private(set) var unroutable: UInt64 = 0

    /// `sender`, when given, sends from `socket`'s port in its place (`UDPSocket.openSender`).
    init(index: Int, loop: EventLoop, socket: UDPSocket, sender: UDPSocket? = nil, certificate: DTLSCertificate,
         configuration: MediaConfiguration, events: @escaping @Sendable (MediaEvent) -> Void) {
        self.index = index
        self.loop = loop
        self.socket = socket
        self.certificate = certificate
        self.configuration = configuration
        self.events = events
        queue = SendQueue(socket: sender ?? socket)
        now = sb_monotonic_ns()
        ntp = NTPTime(monotonicNow: now)
        seed = SystemRandom().next(UInt64.self)
    }

    func emit(_ event: MediaEvent) { events(event) }

    func nextSeed() -> UInt64 {
        seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return seed
    }

    // MARK: Receive path

    func handle(events: UInt32) {
        let started = sb_monotonic_ns()
        defer { receiveWork.record(sb_monotonic_ns() &- started) }
        // Bounded so timers and the mailbox get a turn under sustained load.
        for _ in 0..<16 {
            let n = receiveBatch.receive(from: socket)
            if n <= 0 { break }
            now = sb_monotonic_ns()
            queue.receivedAt = now
            for i in 0..<n { process(i) }
            fanout.run(now: now, queue: queue)
            queue.flush()
            queue.receivedAt = 0
            if n < receiveBatch.capacity { break }
        }
        // The followed speaker's packet is in and the tick is due soon (a margin either side of the expected arrival): mix now.
        if let pacer = tickPacer, !tickRanEarly, pacer.lastArrival >= started, nextTick > now,
           nextTick - now <= UInt64(phase.earlyWindow) {
            tickRanEarly = true
            earlyTicks &+= 1
            tick()
        }
    }

    @inline(__always)
    private func process(_ i: Int) {
        let length = Int(receiveBatch.lengths[i])
        guard length > 0 else { return }
        dispatch(receiveBatch.slot(i), length: length, source: receiveBatch.addresses + i)
    }

    /// Demultiplexes one datagram (RFC 7983 §7) and hands it to its transport.
    @inline(__always)
    func dispatch(_ p: UnsafeMutableRawPointer, length: Int, source storage: UnsafePointer<sockaddr_storage>) {
        datagramsIn &+= 1
        let first = Bytes.byte(p, 0)
        if first >= 128 && first <= 191 {
            guard length >= 12, let source = PeerAddress(storage: storage),
                  let transport = byAddress[source] else { unroutable &+= 1; return }
            let second = Bytes.byte(p, 1)
            if second >= 192 && second <= 223 {
                transport.handleRTCP(p, length: length, now: now, queue: queue)
            } else {
                transport.handleRTP(p, length: length, now: now, queue: queue)
            }
        } else if first <= 3 {
            handleSTUN(UnsafeRawBufferPointer(start: p, count: length), source: storage)
        } else if first >= 20 && first <= 63 {
            guard let source = PeerAddress(storage: storage),
                  let transport = byAddress[source] else { unroutable &+= 1; return }
            transport.handleDTLS(UnsafeRawBufferPointer(start: p, count: length), now: now)
        } else {
            unroutable &+= 1
        }
    }

    /// Sets the batch clock (benchmarks drive the core without the loop).
    func setNow(_ value: UInt64) { now = value }

    /// RFC 8445 §7.3: route by the local half of USERNAME; answer 400/401 for requests we
    /// cannot attribute, stay silent for anything that is not a well-formed request.
    private func handleSTUN(_ bytes: UnsafeRawBufferPointer, source storage: UnsafePointer<sockaddr_storage>) {
        guard let source = PeerAddress(storage: storage),
              let message = try? STUNMessage.parse(bytes), message.type == .bindingRequest else { return }
        guard message.fingerprintOffset != nil else {
            reply(.errorResponse(to: message, error: .badRequest), to: storage)
            return
        }
        guard message.verifyFingerprint(in: bytes) else { return }
        guard let username = message.username, let colon = username.firstIndex(of: ":") else {
            reply(.errorResponse(to: message, error: .badRequest), to: storage)
            return
        }
        guard let transport = byUsernameFragment[String(username[..<colon])] else {
            reply(.errorResponse(to: message, error: .unauthorized), to: storage)
            return
        }
        transport.handleSTUN(message, bytes: bytes, from: source, now: now)
    }

    private func reply(_ message: STUNMessage, to storage: UnsafePointer<sockaddr_storage>) {
        guard let bytes = try? message.serialize(integrityKey: nil, fingerprint: true) else { return }
        bytes.withUnsafeBytes { queue.enqueue($0, to: storage) }
    }

    /// Routes media and DTLS from `address` to `transport` (a validated ICE 5-tuple). The
    /// transport lists the addresses routed to it, so its close drops them all; addresses
    /// its ICE server no longer remembers stop routing once the list outgrows what ICE keeps.
    func map(_ address: PeerAddress, to transport: WebRTCTransport) {
        guard byAddress[address] !== transport else { return }
        if let previous = byAddress[address] { previous.routedAddresses.removeAll { $0 == address } }
        byAddress[address] = transport
        transport.routedAddresses.append(address)
        guard transport.routedAddresses.count > ICEServer.maxTuples else { return }
        transport.routedAddresses.removeAll { stale in
            guard !transport.ice.isValidated(stale), stale != address else { return false }
            byAddress.removeValue(forKey: stale)
            return true
        }
    }

    // MARK: Timers

    static let tickInterval: UInt64 = 20_000_000

    /// Whether this worker runs the tick at all (a worker thread does, the in-process harness does
    /// not), and whether one is scheduled. With no router (so no transport or mixer) there is nothing
    /// to tick: the cadence lapses and the next router starts it again, so an idle server's media
    /// threads sleep.
    private var tickingEnabled = false
    private var tickScheduled = false

    /// Starts the 20 ms cadence (the worker thread, once).
    func startTicking() {
        tickingEnabled = true
        scheduleTick()
    }

    /// A router arrived at a worker whose cadence had lapsed: start it again from now.
    private func resumeTicking() {
        guard tickingEnabled, !tickScheduled else { return }
        nextTick = 0
        scheduleTick()
    }

    private func scheduleTick() {
        tickScheduled = true
        let current = sb_monotonic_ns()
        if nextTick == 0 || current &- nextTick > 5 * WorkerCore.tickInterval && current > nextTick {
            // First tick, or far behind (a stalled loop): start the cadence again from now.
            nextTick = current &+ WorkerCore.tickInterval
        } else {
            nextTick = UInt64(Int64(nextTick &+ WorkerCore.tickInterval) &+ phaseStep)
        }
        phaseStep = 0
        loop.schedule(at: Instant(nanoseconds: nextTick)) { [weak self] in
            guard let self else { return }
            if !self.tickRanEarly { self.tick() }
            self.tickRanEarly = false
            // Transports and mixers close with their router, so no router means nothing to tick.
            if self.routers.isEmpty { self.tickScheduled = false } else { self.scheduleTick() }
        }
    }

    private func tick() {
        now = sb_monotonic_ns()
        let started = now
        if now > nextTick { tickLateness.record(now &- nextTick) } else { tickLateness.record(0) }
        // Mixers first: their packets are the ones with a deadline.
        var leader: Mixer?
        mixerList.withUnsafeBufferPointer { list in
            for mixer in list {
                mixer.tick(now: now, queue: queue)
                if mixer.pacer != nil, mixer.output.consumers.count > leader?.output.consumers.count ?? -1 { leader = mixer }
            }
        }
        tickPacer = leader?.pacer
        if let pacer = tickPacer {
            phaseStep = phase.step(tick: nextTick, arrival: pacer.lastArrival, jitterMilliseconds: pacer.jitterMilliseconds)
        }
        tickTransports(now: now)
        if !mixerList.isEmpty, tickCount % 5 == 0 { for event in mixerEvents() { emit(event) } }
        tickCount &+= 1
        for router in routers.values {
            if let change = router.updateActiveSpeaker(now: now) { emit(.activeSpeaker(router.id, change)) }
            if let levels = router.takeLevels() { emit(.audioLevels(router.id, levels)) }
        }
        queue.flush()
        tickWork.record(sb_monotonic_ns() &- started)
    }

    /// Runs the timers of the transports that have one due.
    func tickTransports(now: UInt64) {
        var i = 0
        while i < tickList.count {
            if tickDue[i] <= now { tickDue[i] = tickList[i].tick(now: now) }
            i += 1
        }
    }

    /// Has `transport` ticked on the next tick (something may have brought one of its timers forward).
    func tickSoon(_ transport: WebRTCTransport) {
        let i = transport.tickIndex
        guard i < tickList.count, tickList[i] === transport else { return }  // closed
        tickDue[i] = 0
    }

    // MARK: Commands (run on the loop thread through the mailbox)

    func createRouter(_ id: RouterID) {
        if routers[id] == nil { routers[id] = Router(id: id) }
        resumeTicking()
    }

    func createTransport(router id: RouterID, transportID: TransportID) throws(MediaError) -> TransportInfo {
        guard let router = routers[id] else { throw .notFound("router \(id)") }
        let ice = ICEParameters.random(iceLite: true)
        let transport = WebRTCTransport(
            id: transportID, router: router, worker: self, ice: ice, rtcpSSRC: SystemRandom().next(UInt32.self) | 1,
            cname: "sb-" + SystemRandom().hex(6))
        transports[transportID] = transport
        transport.tickIndex = tickList.count
        tickList.append(transport)
        tickDue.append(0)
        byUsernameFragment[ice.usernameFragment] = transport
        router.transports.append(transport)
        return TransportInfo(
            id: transportID, router: id, iceParameters: ice,
            candidates: [ICECandidate(ip: configuration.candidateAddress, port: socket.localPort)],
            fingerprint: DTLSFingerprintValue(algorithm: "sha-256", value: certificate.fingerprintSHA256))
    }

    func connect(_ id: TransportID, parameters: DTLSParameters, remoteUsernameFragment: String?) throws(MediaError) {
        guard let transport = transports[id] else { throw .notFound("transport \(id)") }
        do {
            try transport.connect(
                role: parameters.role == .client ? .client : .server,
                remoteFingerprint: (parameters.fingerprint.algorithm, parameters.fingerprint.value),
                remoteUsernameFragment: remoteUsernameFragment, now: sb_monotonic_ns())
        } catch {
            throw .invalid("DTLS setup: \(error)")
        }
    }

    func produce(_ id: TransportID, producerID: ProducerID, parameters: ProducerParameters) throws(MediaError) {
        guard let transport = transports[id] else { throw .notFound("transport \(id)") }
        guard let canonical = CodecCatalog.canonical(for: parameters.codec) else {
            throw .unsupported("codec \(parameters.codec.name)")
        }
        if let ssrc = parameters.ssrc, transport.producers.contains(where: { $0.ssrc == ssrc }) {
            throw .invalid("SSRC \(ssrc) already produced on this transport")
        }
        var track = parameters
        if parameters.simulcast.count > 1 { track.rid = parameters.simulcast.last }
        let producer = Producer(id: producerID, parameters: track, codec: canonical, transport: transport, router: transport.router)
        if let mid = parameters.extensions.mid { transport.midExtensionID = mid }
        if let rid = parameters.extensions.rid { transport.ridExtensionID = rid }
        if let rid = parameters.extensions.repairedRID { transport.repairedRIDExtensionID = rid }
        transport.add(producer)
        transport.router.add(producer)
        producers[producerID] = producer
        guard parameters.simulcast.count > 1 else { return }
        // Simulcast: the layer listed last is the track's producer (what the router and its consumers
        // know); each other layer is a producer on the transport only, `<id>.<rid>`.
        var layers: [Producer] = []
        for rid in parameters.simulcast {
            if rid == track.rid {
                layers.append(producer)
                continue
            }
            var layer = parameters
            layer.rid = rid
            let id = ProducerID(rawValue: producerID.rawValue + "." + rid)
            let sibling = Producer(id: id, parameters: layer, codec: canonical, transport: transport, router: transport.router)
            transport.add(sibling)
            producers[id] = sibling
            layers.append(sibling)
        }
        for layer in layers { layer.layers = layers }
    }

    /// A simulcast subscriber's preferred picture size (0 × 0: the largest layer); it gets the
    /// smallest layer at least that large (`SimulcastSelection`).
    func setPreferredSize(consumer id: ConsumerID, width: Int, height: Int) throws(MediaError) {
        guard let consumer = consumers[id] else { throw .notFound("consumer \(id)") }
        consumer.preferredWidth = max(0, width)
        consumer.preferredHeight = max(0, height)
        consumer.chooseLayer(now: sb_monotonic_ns(), immediately: true)
    }

    /// A subscriber's preferred frame rate (0: every frame): the temporal layers it is sent (`SimulcastSelection.temporalLayer`).
    func setPreferredFrameRate(consumer id: ConsumerID, _ rate: Double) throws(MediaError) {
        guard let consumer = consumers[id] else { throw .notFound("consumer \(id)") }
        consumer.preferredFrameRate = max(0, rate)
        consumer.chooseTemporalLayer()
    }

    /// The Video API's subscriber audio fallback for a video consumer (`AudioFallback`), on or off.
    func setAudioFallback(consumer id: ConsumerID, _ on: Bool) throws(MediaError) {
        guard let consumer = consumers[id] else { throw .notFound("consumer \(id)") }
        guard consumer.kind == .video else { return }
        consumer.setAudioFallback(on, now: sb_monotonic_ns())
    }

    /// The Video API's publisher audio fallback for a video producer's track (a simulcast one's largest layer), on or off.
    func setPublisherAudioFallback(producer id: ProducerID, _ on: Bool) throws(MediaError) {
        guard let producer = producers[id] else { throw .notFound("producer \(id)") }
        guard producer.isVideo else { return }
        (producer.layers.last ?? producer).setPublisherAudioFallback(on)
    }

    func consume(_ id: TransportID, consumerID: ConsumerID, producer producerID: ProducerID) throws(MediaError) -> ConsumerParameters {
        guard let transport = transports[id] else { throw .notFound("transport \(id)") }
        guard let producer = producers[producerID], producer.router === transport.router else {
            throw .notFound("producer \(producerID) in this router")
        }
        // A listener of a mixer's output hears it at 48 kHz.
        mixerList.first { $0.output === producer }?.widen()
        let random = SystemRandom()
        let consumer = Consumer(
            id: consumerID, producer: producer, transport: transport, ssrc: random.next(UInt32.self) | 1,
            cname: transport.cname, initialSequence: random.next(UInt16.self) & 0x7FFF,
            initialTimestamp: random.next(UInt32.self), dropRate: configuration.testDropRate, seed: nextSeed())
        consumer.attach()
        transport.add(consumer)
        consumers[consumerID] = consumer
        return consumer.parameters
    }

    func setPaused(consumer id: ConsumerID, _ paused: Bool) throws(MediaError) {
        guard let consumer = consumers[id] else { throw .notFound("consumer \(id)") }
        if paused { consumer.pause() } else { consumer.resume(now: sb_monotonic_ns()) }
    }

    func setRetransmissionStream(consumer id: ConsumerID, _ enabled: Bool) throws(MediaError) {
        guard let consumer = consumers[id] else { throw .notFound("consumer \(id)") }
        consumer.retransmissionStream = enabled && consumer.rtxSSRC != nil
    }

    func setPaused(producer id: ProducerID, _ paused: Bool) throws(MediaError) {
        guard let producer = producers[id] else { throw .notFound("producer \(id)") }
        guard producer.paused != paused else { return }
        // A simulcast track pauses whole: every layer, and its consumers are on any of them.
        let layers = producer.layers.isEmpty ? [producer] : producer.layers
        for layer in layers { layer.paused = paused }
        if !paused {
            let now = sb_monotonic_ns()
            for layer in layers { for consumer in layer.consumers where consumer.layer === layer { consumer.start(now: now) } }
        }
    }

    /// Points a consumer at another producer of the same kind; its subscriber keeps one
    /// continuous stream (same SSRC, sequence + 1, timestamp advanced by wall time).
    func switchConsumer(_ id: ConsumerID, to producerID: ProducerID) throws(MediaError) {
        guard let consumer = consumers[id] else { throw .notFound("consumer \(id)") }
        guard let producer = producers[producerID], producer.router === consumer.transport.router,
              producer.parameters.kind == consumer.kind, producer.codec.name == consumer.codec.name else {
            throw .invalid("producer \(producerID) is not a compatible track in this router")
        }
        consumer.switchProducer(to: producer, now: sb_monotonic_ns())
    }

    // MARK: Closing (each returns what it closed; the engine forgets those ids)

    /// Closes a producer and every consumer of it, on whichever transport of the router.
    @discardableResult
    func closeProducer(_ id: ProducerID) -> ClosedObjects {
        guard let producer = producers.removeValue(forKey: id) else { return ClosedObjects() }
        var closed = ClosedObjects(producers: [id])
        if !producer.layers.isEmpty {
            // A simulcast track closes whole: its layers first (a layer holds each of them).
            let layers = producer.layers
            for layer in layers { layer.layers = [] }
            for layer in layers where layer !== producer { closed.append(closeProducer(layer.id)) }
        }
        for consumer in producer.consumers { closed.append(closeConsumer(consumer.id)) }
        if producer.mixerInput != nil { for mixer in mixerList { mixer.removeInputs(of: producer) } }
        producer.transport.remove(producer)
        producer.router.remove(producer)
        return closed
    }

    @discardableResult
    func closeConsumer(_ id: ConsumerID) -> ClosedObjects {
        guard let consumer = consumers.removeValue(forKey: id) else { return ClosedObjects() }
        consumer.detach()
        consumer.transport.remove(consumer)
        mixerList.first { $0.output === consumer.producer }?.settleRate()
        return ClosedObjects(consumers: [id])
    }

    /// Closes a transport with its producers (and so their consumers elsewhere) and its
    /// consumers, and drops every route to it.
    @discardableResult
    func closeTransport(_ id: TransportID) -> ClosedObjects {
        guard let transport = transports.removeValue(forKey: id) else { return ClosedObjects() }
        var closed = ClosedObjects(transports: [id])
        for producer in transport.producers { closed.append(closeProducer(producer.id)) }
        for consumer in transport.consumers { closed.append(closeConsumer(consumer.id)) }
        transport.close()
        let last = tickList.removeLast(), lastDue = tickDue.removeLast()
        if last !== transport {
            tickList[transport.tickIndex] = last
            tickDue[transport.tickIndex] = lastDue
            last.tickIndex = transport.tickIndex
        }
        byUsernameFragment.removeValue(forKey: transport.ice.local.usernameFragment)
        for address in transport.routedAddresses where byAddress[address] === transport { byAddress.removeValue(forKey: address) }
        transport.routedAddresses.removeAll()
        transport.router.transports.removeAll { $0 === transport }
        queue.flush()
        return closed
    }

    @discardableResult
    func closeRouter(_ id: RouterID) -> ClosedObjects {
        guard let router = routers.removeValue(forKey: id) else { return ClosedObjects() }
        var closed = ClosedObjects()
        for mixer in mixerList where mixer.router === router { closed.append(closeMixer(mixer.id)) }
        for transport in router.transports { closed.append(closeTransport(transport.id)) }
        closed.routers.append(id)
        return closed
    }

    func stats(_ id: TransportID) throws(MediaError) -> TransportStats {
        guard let transport = transports[id] else { throw .notFound("transport \(id)") }
        return transport.stats()
    }

    func producerList(_ id: RouterID) -> [(ProducerID, MediaKind)] {
        routers[id]?.producers.map { ($0.id, $0.parameters.kind) } ?? []
    }

    func workerStats() -> WorkerStats {
        WorkerStats(
            index: index, port: socket.localPort, datagramsIn: datagramsIn, datagramsOut: queue.sent,
            bytesOut: queue.sentBytes, sendDrops: queue.dropped, unroutable: unroutable,
            routers: routers.count, transports: transports.count, producers: producers.count, consumers: consumers.count,
            forwardingMicrosecondsP50: queue.forwardingLatency.percentile(0.5) * 1000,
            forwardingMicrosecondsP99: queue.forwardingLatency.percentile(0.99) * 1000,
            segmentation: queue.segmentation, segmentsCoalesced: queue.segmentsCoalesced,
            segmentationRefusals: queue.segmentationRefusals)
    }

    /// Sizes of this worker's tables and of the lists that link its objects. Each object sits
    /// in its table once and in each owner's list once, so the sums match the tables unless a
    /// close left something behind.
    struct Tables: Sendable, Hashable {
        var objects = MediaObjectCounts()
        /// Routes to transports: ICE username fragments and validated source addresses.
        var usernameFragments = 0
        var addresses = 0
        /// Transports and producers listed by routers.
        var routerTransports = 0
        var routerProducers = 0
        /// Producers and consumers listed by transports.
        var transportProducers = 0
        var transportConsumers = 0
        /// Consumers listed by producers (a simulcast consumer by its layer, not again by the one it waits to move to).
        var producerConsumers = 0
        /// Simulcast layers other than their track's producer: in the producer table and listed by transports
        /// (`objects.producers` counts tracks, as the engine does).
        var layers = 0
        var transportLayers = 0
    }

    func tables() -> Tables {
        var t = Tables()
        let tracks = producers.values.filter(\.isTrack)
        t.objects = MediaObjectCounts(
            routers: routers.count, transports: transports.count, producers: tracks.count, consumers: consumers.count)
        t.layers = producers.count - tracks.count
        t.usernameFragments = byUsernameFragment.count
        t.addresses = byAddress.count
        for router in routers.values {
            t.routerTransports += router.transports.count
            t.routerProducers += router.producers.count
        }
        for transport in transports.values {
            let own = transport.producers.filter(\.isTrack).count
            t.transportProducers += own
            t.transportLayers += transport.producers.count - own
            t.transportConsumers += transport.consumers.count
        }
        for producer in producers.values { t.producerConsumers += producer.consumers.count }
        for consumer in consumers.values where consumer.pendingLayer != nil { t.producerConsumers -= 1 }
        return t
    }
}
