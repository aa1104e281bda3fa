import Testing
@testable import Media

@Suite("Engine on loopback with client-role peers")
struct EngineLoopbackTests {
    @Test("three subscribers receive a publisher's audio and video through the SFU without loss")
    func fanOut() async throws {
        var configuration = MediaConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.port = 0
        let engine = try MediaEngine(configuration: configuration)
        defer { engine.shutdown() }
        let generator = try LoadGenerator(threads: 1)
        defer { generator.shutdown() }
        let router = try await engine.createRouter()

        let (publisher, offer) = try await generator.makePublisher(video: true)
        let publication = try await engine.publish(router: router, offer: offer)
        #expect(publication.producers.count == 2)
        try await generator.completePublisher(publisher, answer: publication.answer)
        try await waitConnected(generator, 1)

        for _ in 0..<3 {
            let subscription = try await engine.subscribe(router: router)
            #expect(subscription.consumers.count == 2)
            let (_, answer) = try await generator.makeSubscriber(offer: subscription.offer)
            try await engine.completeSubscription(subscription, answer: answer)
        }
        try await waitConnected(generator, 4)
        try await Task.sleep(for: .milliseconds(500))
        await generator.startMeasuring()
        try await Task.sleep(for: .seconds(1))
        let report = await generator.stopMeasuring(seconds: 1)
        // 50 audio + 100 video packets/s sent, each to three subscribers.
        #expect(report.publishersSent > 120)
        #expect(report.subscribersReceived >= report.publishersSent * 3 - 30)
        #expect(report.lossFraction < 0.01)
        let stats = try await engine.stats(transport: publication.transport)
        #expect(stats.state == .connected)
        #expect(stats.producers.values.allSatisfy { $0.packets > 0 })
    }

    func waitConnected(_ generator: LoadGenerator, _ count: Int) async throws {
        for _ in 0..<200 {
            if await generator.connectionCounts().connected >= count { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("peers did not connect")
    }
}
