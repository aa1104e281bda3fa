import Testing
import Wire
@testable import Media

@Suite("Renegotiating one subscribe connection as producers come and go")
struct SubscriptionRenegotiationTests {
    func engine() throws -> MediaEngine {
        var configuration = MediaConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.port = 0
        return try MediaEngine(configuration: configuration)
    }

    /// One audio producer per publication of the captured aiortc offer (its video is ignored here).
    func audioProducer(_ engine: MediaEngine, _ router: RouterID) async throws -> ProducerID {
        let publication = try await engine.publish(router: router, offer: try mediaFixture("media/aiortc-publish-offer.sdp"))
        return try #require(publication.producers.first { $0.parameters.kind == .audio }).id
    }

    @Test("an empty subscription has no offer until there is something to consume")
    func emptyFirst() async throws {
        let engine = try engine()
        defer { engine.shutdown() }
        let router = try await engine.createRouter()
        let empty = try await engine.openSubscription(router: router)
        #expect(empty.offer.isEmpty)
        let same = try await engine.updateSubscription(empty, producers: [])
        #expect(same.version == empty.version)
        let a = try await audioProducer(engine, router)
        let first = try await engine.updateSubscription(empty, producers: [a])
        #expect(first.version == empty.version + 1)
        let sdp = try SessionDescription.parse(first.offer)
        #expect(sdp.media.count == 1)
        #expect(sdp.media[0].direction == .sendonly)
        #expect(sdp.origin?.sessionID == empty.sessionID)
    }

    @Test("a gone producer leaves its m-line inactive in place, and the next one reuses it")
    func keepsOrder() async throws {
        let engine = try engine()
        defer { engine.shutdown() }
        let router = try await engine.createRouter()
        let a = try await audioProducer(engine, router)
        let b = try await audioProducer(engine, router)
        let c = try await audioProducer(engine, router)
        let start = try await engine.updateSubscription(try await engine.openSubscription(router: router), producers: [a, b])
        #expect(engine.activeConsumers(start).keys.sorted { $0.rawValue < $1.rawValue } == [a, b].sorted { $0.rawValue < $1.rawValue })

        let withoutA = try await engine.updateSubscription(start, producers: [b])
        let offer = try SessionDescription.parse(withoutA.offer)
        #expect(offer.media.count == 2)
        #expect(offer.media[0].direction == .inactive)
        #expect(offer.media[0].port == 9, "still bundled: the transport never changes")
        #expect(offer.media[1].direction == .sendonly)
        #expect(offer.origin?.sessionVersion == start.version + 1)
        #expect(offer.groups.first?.identifiers == ["0", "1"])

        let withC = try await engine.updateSubscription(withoutA, producers: [b, c])
        #expect(withC.consumers.count == 2, "c took the free m-line instead of a new one")
        #expect(withC.inactive.isEmpty)
        #expect(withC.consumers[0].producerID == c)
        let stats = await engine.workerStats()
        #expect(stats.map(\.consumers).reduce(0, +) == 2)
    }

    @Test("a producer that closed before the update (its consumer already gone) is retired without an error")
    func producerClosed() async throws {
        let engine = try engine()
        defer { engine.shutdown() }
        let router = try await engine.createRouter()
        let a = try await audioProducer(engine, router)
        let b = try await audioProducer(engine, router)
        let s = try await engine.updateSubscription(try await engine.openSubscription(router: router), producers: [a, b])
        try await engine.closeProducer(a)
        let next = try await engine.updateSubscription(s, producers: [b])
        #expect(engine.activeConsumers(next).keys.map { $0 } == [b])
        #expect(next.inactive.count == 1)
        // Asking for a producer that no longer exists is skipped, not an error.
        let again = try await engine.updateSubscription(next, producers: [b, a])
        #expect(again.version == next.version)
    }
}
