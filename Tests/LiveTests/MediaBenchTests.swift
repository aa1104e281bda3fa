import Media
import Testing
@testable import Live

/// The development-only bench rooms behind `/test/media`: nothing but the client's DELETE or a failed
/// transport closes what they make.
@Suite("Bench rooms release their media")
struct MediaBenchTests {
    @Test("a bench transport that fails (consent expired) is closed with its producers, the room with its last transport")
    func failedTransportIsClosed() async throws {
        let engine = try loopbackEngine(workers: 1)
        defer { engine.shutdown() }
        let bench = MediaBench(engine: engine)
        let offer = try RoomsTests.fixtureOffer()
        let gone = try await bench.publish(room: "soak", offer: offer)
        let kept = try await bench.publish(room: "soak", offer: offer)
        #expect(await engine.objectCounts().placement.transports == 2)

        #expect(bench.transportFailed(TransportID(rawValue: "not-from-the-bench")) == nil)
        await bench.transportFailed(gone.transport)?.value
        let counts = await engine.objectCounts()
        #expect(counts.placement.transports == 1 && counts.workers.transports == 1)
        #expect(counts.placement.producers == kept.producers.count && counts.placement.routers == 1)
        // Failing twice, or after a DELETE, does nothing.
        #expect(bench.transportFailed(gone.transport) == nil)
        try await bench.close(transport: kept.transport)
        #expect(bench.transportFailed(kept.transport) == nil)
        #expect(await engine.objectCounts().placement == MediaObjectCounts())
    }
}
