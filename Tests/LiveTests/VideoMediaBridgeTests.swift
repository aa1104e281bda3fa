import Foundation
import Media
import MediaLoad
import Platform
import Testing
@testable import Live

@Suite("Video sessions on the SFU")
struct VideoMediaBridgeTests {
    static func engine() throws -> MediaEngine {
        var configuration = MediaConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.port = 0
        configuration.workers = 2
        return try MediaEngine(configuration: configuration)
    }

    static func waitConnected(_ generator: LoadGenerator, _ count: Int) async throws {
        for _ in 0..<300 {
            if await generator.connectionCounts().connected >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("peers did not connect")
    }

    static func workerTotals(_ engine: MediaEngine) async -> (routers: Int, transports: Int, producers: Int, consumers: Int) {
        let stats = await engine.workerStats()
        return (stats.map(\.routers).reduce(0, +), stats.map(\.transports).reduce(0, +),
                stats.map(\.producers).reduce(0, +), stats.map(\.consumers).reduce(0, +))
    }

    @Test("a subscriber receives a stream's audio and video; unpublishing frees everything")
    func publishSubscribeUnpublish() async throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let bridge = EngineVideoMediaBridge(engine: engine)
        let generator = try LoadGenerator(threads: 1)
        defer { generator.shutdown() }

        let (publisher, offer) = try await generator.makePublisher(video: true)
        let answer = try await bridge.publish(sessionID: "s1", streamID: "st1", offer: offer)
        try await generator.completePublisher(publisher, answer: answer)
        let subscribeOffer = try await bridge.subscribe(sessionID: "s1", streamID: "st1", subscriberID: "c2")
        let (_, subscribeAnswer) = try await generator.makeSubscriber(offer: subscribeOffer)
        try await bridge.completeSubscription(sessionID: "s1", streamID: "st1", subscriberID: "c2", answer: subscribeAnswer)
        try await Self.waitConnected(generator, 2)
        try await Task.sleep(for: .milliseconds(300))
        await generator.startMeasuring()
        try await Task.sleep(for: .milliseconds(600))
        let report = await generator.stopMeasuring(seconds: 0.6)
        #expect(report.subscribersReceived > 50)
        #expect(await Self.workerTotals(engine) == (1, 2, 2, 2))
        #expect(bridge.transports(sessionID: "s1", streamID: "st1").subscribers.keys.sorted() == ["c2"])

        await bridge.unpublish(sessionID: "s1", streamID: "st1")
        #expect(await Self.workerTotals(engine) == (0, 0, 0, 0))
        #expect(bridge.activeRouters == 0)
    }

    @Test("one session's streams share one router, so its media stays on one worker")
    func sessionPinnedToOneRouter() async throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let bridge = EngineVideoMediaBridge(engine: engine)
        let generator = try LoadGenerator(threads: 1)
        defer { generator.shutdown() }
        for stream in ["a", "b", "c"] {
            let (_, offer) = try await generator.makePublisher(video: true)
            _ = try await bridge.publish(sessionID: "s", streamID: stream, offer: offer)
        }
        let (_, other) = try await generator.makePublisher(video: false)
        _ = try await bridge.publish(sessionID: "t", streamID: "d", offer: other)
        let perWorker = await engine.workerStats().map(\.transports).sorted()
        #expect(perWorker == [1, 3])
        #expect(bridge.activeRouters == 2)
    }

    @Test("subscribing to a stream that has no media fails; a refused offer leaves no router")
    func failures() async throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let bridge = EngineVideoMediaBridge(engine: engine)
        await #expect(throws: MediaError.self) {
            _ = try await bridge.subscribe(sessionID: "s", streamID: "nope", subscriberID: "c")
        }
        await #expect(throws: (any Error).self) {
            _ = try await bridge.publish(sessionID: "s", streamID: "x", offer: "v=0\r\n")
        }
        #expect(bridge.activeRouters == 0)
        #expect(await Self.workerTotals(engine).routers == 0)
    }

    @Test("a connection that leaves loses its subscriptions, and the publisher stays")
    func connectionClosed() async throws {
        let engine = try Self.engine()
        defer { engine.shutdown() }
        let bridge = EngineVideoMediaBridge(engine: engine)
        let generator = try LoadGenerator(threads: 1)
        defer { generator.shutdown() }
        let (_, offer) = try await generator.makePublisher(video: true)
        _ = try await bridge.publish(sessionID: "s", streamID: "st", offer: offer)
        _ = try await bridge.subscribe(sessionID: "s", streamID: "st", subscriberID: "c1")
        _ = try await bridge.subscribe(sessionID: "s", streamID: "st", subscriberID: "c2")
        // Subscribing again replaces the earlier transport.
        _ = try await bridge.subscribe(sessionID: "s", streamID: "st", subscriberID: "c2")
        #expect(await Self.workerTotals(engine).transports == 3)
        await bridge.connectionClosed(sessionID: "s", connectionID: "c1")
        #expect(bridge.transports(sessionID: "s", streamID: "st").subscribers.keys.sorted() == ["c2"])
        #expect(await Self.workerTotals(engine) == (1, 2, 2, 2))
        await bridge.unsubscribe(sessionID: "s", streamID: "st", subscriberID: "c2")
        #expect(await Self.workerTotals(engine) == (1, 1, 2, 0))
    }
}
