import Media
import MediaLoad
import Testing
@testable import SwitchboardClient

@Suite("The SDK's media reports what it receives")
struct MediaReportTests {
    @Test("receiver reports on every received stream reach the server: each consumer's loss and round-trip time are measured")
    func receiverReports() async throws {
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
        try await generator.completePublisher(publisher, answer: publication.answer)

        let subscription = try await engine.subscribe(router: router)
        let peer = try await MediaPeerHandle()
        defer { peer.close() }
        let frames = VideoFrameCounter()
        try await engine.completeSubscription(subscription, answer: try await peer.answer(offer: subscription.offer, owners: [:], sink: nil,
                                                                                           videoSink: frames))
        // A round-trip time is measured only from a report echoing one of the server's sender reports.
        var last: [StreamStats] = []
        let measured = await eventually(seconds: 15) {
            guard let stats = try? await engine.stats(transport: subscription.transport) else { return false }
            last = Array(stats.consumers.values)
            return last.count == 2 && last.allSatisfy { $0.packets > 0 && $0.roundTripTime > 0 && $0.roundTripTime < 1 }
        }
        #expect(measured, "\(last)")
        #expect(last.allSatisfy { $0.packetsLost == 0 }, "nothing lost on loopback: \(last)")
        #expect(frames.frames > 0)
    }
}
