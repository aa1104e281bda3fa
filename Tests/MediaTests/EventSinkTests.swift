import Synchronization
import Testing
@testable import Media

@Suite("Media events")
struct EventSinkTests {
    /// A room emits audio levels about three times a second for as long as it lives; a server with a few
    /// hundred rooms delivers this many events within minutes. Each delivery must cost the same as the
    /// first (a handler that grew per event overflowed the worker's stack long before this count).
    @Test("every event reaches the handler, however many have gone before")
    func manyEvents() {
        let sink = MediaEngine.EventSink()
        let delivered = Atomic<Int>(0)
        sink.set { event in
            if case .activeSpeaker = event { delivered.add(1, ordering: .relaxed) }
        }
        let event = MediaEvent.activeSpeaker(RouterID(rawValue: "rt-1"), nil)
        for _ in 0..<300_000 { sink.deliver(event) }
        #expect(delivered.load(ordering: .relaxed) == 300_000)
    }

    @Test("a replaced handler gets nothing more")
    func replaced() {
        let sink = MediaEngine.EventSink()
        let first = Atomic<Int>(0), second = Atomic<Int>(0)
        let event = MediaEvent.transportState(TransportID(rawValue: "tp-1"), .connected)
        sink.deliver(event)  // no handler yet: dropped
        sink.set { _ in first.add(1, ordering: .relaxed) }
        sink.deliver(event)
        sink.set { _ in second.add(1, ordering: .relaxed) }
        sink.deliver(event)
        #expect(first.load(ordering: .relaxed) == 1)
        #expect(second.load(ordering: .relaxed) == 1)
    }
}
