import Glibc
import Testing
import Wire
@testable import Media
@testable import MediaLoad

/// Closing a transport, router or producer closes what depends on it (mediasoup's
/// `transportclose`, `routerclose`, `producerclose`), and the engine forgets every id it closed.
@Suite("Engine bookkeeping when media objects close")
struct EngineBookkeepingTests {
    static func engine(workers: Int = 2) throws -> MediaEngine {
        var configuration = MediaConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.port = 0
        configuration.workers = workers
        return try MediaEngine(configuration: configuration)
    }

    /// A member's publish connection from the captured aiortc offer: one audio and one video producer.
    static func publish(_ engine: MediaEngine, _ router: RouterID) async throws -> MediaEngine.Publication {
        try await engine.publish(router: router, offer: try mediaFixture("media/aiortc-publish-offer.sdp"))
    }

    /// Every count the engine and its workers keep, checked against each other and against `expected`.
    static func expectCounts(_ engine: MediaEngine, _ expected: MediaObjectCounts, sourceLocation: SourceLocation = #_sourceLocation) async {
        let counts = await engine.objectCounts()
        #expect(counts.placement == expected, "engine placement maps", sourceLocation: sourceLocation)
        #expect(counts.workers == expected, "worker tables", sourceLocation: sourceLocation)
        for t in await engine.workerTables() {
            #expect(t.usernameFragments == t.objects.transports, sourceLocation: sourceLocation)
            #expect(t.routerTransports == t.objects.transports, sourceLocation: sourceLocation)
            #expect(t.routerProducers == t.objects.producers, sourceLocation: sourceLocation)
            #expect(t.transportProducers == t.objects.producers, sourceLocation: sourceLocation)
            #expect(t.transportConsumers == t.objects.consumers, sourceLocation: sourceLocation)
            #expect(t.producerConsumers == t.objects.consumers, sourceLocation: sourceLocation)
            #expect(t.transportLayers == t.layers, sourceLocation: sourceLocation)
        }
    }

    @Test("a simulcast track is one producer to the engine; its layers and their consumers close with it")
    func simulcastClose() async throws {
        let engine = try Self.engine(workers: 1)
        defer { engine.shutdown() }
        let router = try await engine.createRouter()
        let publication = try await engine.publish(router: router, offer: try mediaFixture("media/chromium-simulcast-offer.sdp"))
        #expect(publication.producers.count == 2)
        var subscriptions: [MediaEngine.Subscription] = []
        for _ in 0..<2 { subscriptions.append(try await engine.subscribe(router: router)) }
        #expect(subscriptions.allSatisfy { $0.consumers.count == 2 })
        await Self.expectCounts(engine, MediaObjectCounts(routers: 1, transports: 3, producers: 2, consumers: 4))
        #expect(await engine.workerTables().map(\.layers) == [2])
        // Each layer reports on its own (`<track>.<rid>` for the two below the track's).
        let stats = try await engine.stats(transport: publication.transport)
        let video = try #require(publication.producers.first { $0.parameters.kind == .video }).id
        #expect(Set(stats.producers.keys) == Set(publication.producers.map(\.id.rawValue) + ["\(video.rawValue).q", "\(video.rawValue).h"]))
        #expect(stats.producers[video.rawValue]?.rid == "f")
        // A preference is taken by a simulcast consumer (and refused for an unknown one).
        let consumer = try #require(subscriptions[0].consumers.first { $0.kind == .video }).id
        try await engine.setPreferredSize(consumer: consumer, width: 320, height: 180)
        await #expect(throws: MediaError.self) { try await engine.setPreferredSize(consumer: ConsumerID(rawValue: "cn-none"), width: 1, height: 1) }

        let closed = try await engine.closeTransport(publication.transport)
        #expect(Set(closed.producers).isSuperset(of: Set(publication.producers.map(\.id))))
        #expect(closed.consumers.count == 4)
        await Self.expectCounts(engine, MediaObjectCounts(routers: 1, transports: 2, producers: 0, consumers: 0))
        #expect(await engine.workerTables().map(\.layers) == [0])
    }

    @Test("closing a transport closes its producers, their consumers on other transports, and its own consumers")
    func transportClose() async throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let router = try await engine.createRouter()
        let other = try await Self.publish(engine, router)
        let closing = try await Self.publish(engine, router)
        // The closing transport also carries consumers of the other member's tracks.
        var ownConsumers: [ConsumerID] = []
        for producer in other.producers { ownConsumers.append(try await engine.consume(transport: closing.transport, producer: producer.id).id) }
        let listener = try await engine.updateSubscription(
            try await engine.openSubscription(router: router), producers: (other.producers + closing.producers).map(\.id))
        let listenerConsumers = Dictionary(uniqueKeysWithValues: listener.consumers.map { ($0.producerID, $0.id) })
        await Self.expectCounts(engine, MediaObjectCounts(routers: 1, transports: 3, producers: 4, consumers: 6))

        let closed = try await engine.closeTransport(closing.transport)
        #expect(closed.transports == [closing.transport])
        #expect(Set(closed.producers) == Set(closing.producers.map(\.id)))
        #expect(Set(closed.consumers) == Set(ownConsumers + closing.producers.compactMap { listenerConsumers[$0.id] }))
        #expect(closed.routers.isEmpty)
        await Self.expectCounts(engine, MediaObjectCounts(routers: 1, transports: 2, producers: 2, consumers: 2))
        // Calls naming a closed object fail as for any unknown id.
        for consumer in closed.consumers {
            await #expect(throws: MediaError.notFound("consumer \(consumer)")) { try await engine.pause(consumer: consumer) }
        }
    }

    @Test("closing a router closes every transport, producer and consumer in it, and only those")
    func routerClose() async throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let kept = try await engine.createRouter()
        let keptPublication = try await Self.publish(engine, kept)
        let router = try await engine.createRouter()
        let a = try await Self.publish(engine, router)
        let b = try await Self.publish(engine, router)
        let listener = try await engine.updateSubscription(
            try await engine.openSubscription(router: router), producers: (a.producers + b.producers).map(\.id))
        for producer in b.producers { _ = try await engine.consume(transport: a.transport, producer: producer.id) }
        await Self.expectCounts(engine, MediaObjectCounts(routers: 2, transports: 4, producers: 6, consumers: 6))

        let closed = try await engine.closeRouter(router)
        #expect(closed.routers == [router])
        #expect(Set(closed.transports) == [a.transport, b.transport, listener.transport])
        #expect(closed.producers.count == 4)
        #expect(closed.consumers.count == 6)
        await Self.expectCounts(engine, MediaObjectCounts(routers: 1, transports: 1, producers: 2, consumers: 0))
        #expect(try await engine.producers(in: kept).count == keptPublication.producers.count)
        try await engine.closeRouter(kept)
        await Self.expectCounts(engine, MediaObjectCounts())
    }

    @Test("closing a producer closes and reports its consumers on every transport")
    func producerClose() async throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let router = try await engine.createRouter()
        let publication = try await Self.publish(engine, router)
        let audio = try #require(publication.producers.first { $0.parameters.kind == .audio }).id
        var consumers: [ConsumerID] = []
        for _ in 0..<3 {
            let s = try await engine.updateSubscription(try await engine.openSubscription(router: router), producers: publication.producers.map(\.id))
            consumers += s.consumers.filter { $0.producerID == audio }.map(\.id)
        }
        await Self.expectCounts(engine, MediaObjectCounts(routers: 1, transports: 4, producers: 2, consumers: 6))

        let closed = try await engine.closeProducer(audio)
        #expect(closed.producers == [audio])
        #expect(Set(closed.consumers) == Set(consumers))
        #expect(closed.transports.isEmpty)
        await Self.expectCounts(engine, MediaObjectCounts(routers: 1, transports: 4, producers: 1, consumers: 3))
    }

    /// A peer that checks from more source addresses than ICE remembers (a phone hopping networks,
    /// or a spray) must not leave routes to its transport behind, neither while open nor once closed.
    @Test("a transport checked from more addresses than ICE keeps leaves no route behind")
    func routesForgotten() async throws {
        let engine = try Self.engine(workers: 1)
        defer { engine.shutdown() }
        let router = try await engine.createRouter()
        let info = try await engine.createWebRtcTransport(router: router)
        let ice = info.iceParameters
        let attributes: [STUNAttribute] = [
            .username(ice.usernameFragment + ":peer"), .priority(1_853_824_767), .iceControlling(tieBreaker: 42),
        ]
        let request = try STUNMessage(
            type: .bindingRequest, transactionID: STUNTransactionID(word0: 1, word1: 2, word2: 3), attributes: attributes
        ).serialize(integrityKey: Array(ice.password.utf8), hmacSHA1: hmacSHA1, fingerprint: true)
        let checks = ICEServer.maxTuples + 4
        let routes = try await engine.workers[0].run { core throws(MediaError) -> Int in
            var bytes = request
            for i in 0..<checks {
                var source = sockaddr_storage()
                PeerAddress(ipv4: 0x7F00_0001, port: UInt16(40_000 + i)).write(to: &source, ipv6Socket: core.socket.isIPv6)
                core.setNow(ms(UInt64(1 + i)))
                bytes.withUnsafeMutableBytes { core.dispatch($0.baseAddress!, length: $0.count, source: &source) }
                bytes = request
            }
            core.queue.flush()
            return core.tables().addresses
        }
        #expect(routes == ICEServer.maxTuples, "the addresses ICE remembers, and no others")
        try await engine.closeTransport(info.id)
        let counts = await engine.objectCounts()
        #expect(counts.routes == 0)
        #expect(counts.workers == MediaObjectCounts(routers: 1))
    }

    /// Members join and leave a room the way `RoomMedia` drives the engine (publish; subscribe to
    /// the others; the others subscribe to the newcomer; leave closes both connections and the
    /// others renegotiate), and every hundredth time the room closes under them instead. No
    /// handshakes: the bookkeeping, not DTLS, is what is churned.
    @Test("10,000 join/leave cycles bring every map back to its baseline, and memory stays flat after warm-up")
    func churn() async throws {
        let cycles = 10_000, warmUp = 2_000, routerEvery = 100
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let offer = try mediaFixture("media/aiortc-publish-offer.sdp")

        struct Room {
            var router: RouterID
            var resident: MediaEngine.Publication
            var listening: MediaEngine.Subscription
        }
        func openRoom() async throws -> Room {
            let router = try await engine.createRouter()
            return Room(
                router: router, resident: try await engine.publish(router: router, offer: offer),
                listening: try await engine.openSubscription(router: router))
        }

        var room = try await openRoom()
        let baseline = await engine.objectCounts()
        #expect(baseline.placement == MediaObjectCounts(routers: 1, transports: 2, producers: 2))
        var warmResident = 0
        func run(_ cycle: Int) async throws {
            let joiner = try await engine.publish(router: room.router, offer: offer)
            let listening = try await engine.updateSubscription(
                try await engine.openSubscription(router: room.router), producers: room.resident.producers.map(\.id))
            room.listening = try await engine.updateSubscription(room.listening, producers: joiner.producers.map(\.id))
            #expect(listening.consumers.count == 2 && engine.activeConsumers(room.listening).count == 2)
            if cycle % routerEvery == 0 {
                try await engine.closeRouter(room.router)
                room = try await openRoom()
            } else {
                try await engine.closeTransport(joiner.transport)
                try await engine.closeTransport(listening.transport)
                room.listening = try await engine.updateSubscription(room.listening, producers: [])
            }
            if cycle == warmUp {
                let counts = await engine.objectCounts()
                #expect(counts == baseline, "after \(warmUp) cycles")
                warmResident = FanoutBenchmark.residentBytes()
            }
        }
        for cycle in 1...cycles { try await run(cycle) }
        var endResident = FanoutBenchmark.residentBytes()
        let counts = await engine.objectCounts()
        #expect(counts == baseline, "after \(cycles) cycles")
        #expect(room.listening.consumers.count <= 2, "m-lines are reused, not added per cycle")
        // Allocator noise is tens of KiB. The bound catches anything leaked per cycle of about 1 KiB
        // or more (a transport with its DTLS state is tens of KiB); the counts above catch stale ids.
        // The RSS is the whole test process's: `make test` runs this test in a process of its own (suites beside it
        // — the speech recognizer's language model, live servers' workers and buffers — grew it by 17–87 MiB in a
        // window on clean clones). Should something run beside it anyway, a leak still grows in every window: up
        // to two more windows of as many cycles, and it fails only if each of them grew.
        var growth = endResident - warmResident
        var next = cycles + 1
        for _ in 0..<2 where growth >= 8 << 20 {
            warmResident = endResident
            for cycle in next..<(next + cycles - warmUp) { try await run(cycle) }
            next += cycles - warmUp
            endResident = FanoutBenchmark.residentBytes()
            growth = endResident - warmResident
        }
        #expect(growth < 8 << 20, "RSS grew \(growth >> 10) KiB over \(cycles - warmUp) cycles after warm-up")

        try await engine.closeRouter(room.router)
        await Self.expectCounts(engine, MediaObjectCounts())
        #expect(await engine.objectCounts().routes == 0)
    }

    @Test("a worker with no room stops its 20 ms tick, and the next room starts it again")
    func idleWorkerSleeps() async throws {
        let engine = try Self.engine(workers: 1)
        defer { engine.shutdown() }
        /// Ticks the worker ran over `seconds` from now.
        func ticks(over seconds: Double) async -> UInt64 {
            _ = await engine.tickLateness(reset: true)
            usleep(UInt32(seconds * 1e6))
            return await engine.tickLateness().first?.ticks ?? 0
        }
        // The first tick after start finds nothing to do and lets the cadence lapse (at most that one tick
        // in the window, if this machine ran it late; a running cadence would be 25).
        usleep(100_000)
        #expect(await ticks(over: 0.5) <= 1)
        let router = try await engine.createRouter()
        // Running again: 25 ticks due in the half second, a loaded machine may run fewer.
        #expect(await ticks(over: 0.5) >= 5)
        _ = try await engine.closeRouter(router)
        usleep(100_000)
        #expect(await ticks(over: 0.5) <= 1)
    }
}
