import Audio
import Testing
@testable import API

@Suite("Lines: the far end's queue and SIP outcomes")
struct LineTests {
    func frame(_ value: Int16) -> AudioFrame {
        var f = AudioFrame(rate: .hz48000)
        f.withMutableSamples { s in for i in 0..<s.count { s[i] = value } }
        return f
    }

    /// The next frame's first sample, nil when the queue gives nothing this tick.
    func take(_ q: inout LineQueue) -> Int16? {
        var out = AudioFrame(rate: .hz48000)
        return q.pull(into: &out) ? out.withSamples { $0[0] } : nil
    }

    @Test("nothing is mixed until two frames wait; then one per tick in order, and priming again after running dry")
    func priming() {
        var q = LineQueue()
        q.push(frame(1))
        #expect(take(&q) == nil, "one frame is not enough to start")
        q.push(frame(2))
        #expect(take(&q) == 1)
        #expect(take(&q) == 2)
        #expect(take(&q) == nil, "ran dry")
        q.push(frame(3))
        #expect(take(&q) == nil, "primes again")
        q.push(frame(4))
        #expect(take(&q) == 3)
    }

    @Test("a far end faster than the ticks loses its oldest frames, counted; a wrong-sized frame is ignored")
    func overflow() {
        var q = LineQueue()
        for v in 1...Int16(LineQueue.capacity + 3) { q.push(frame(v)) }
        #expect(q.dropped == 3)
        #expect(take(&q) == 4, "the three oldest went")
        q.push(AudioFrame(rate: .hz8000))
        var pulled = 0
        while take(&q) != nil { pulled += 1 }
        #expect(pulled == LineQueue.capacity - 1)
    }

    @Test("SIP final responses become the documented leg statuses", arguments: [
        (nil, true, "completed"), (nil, false, "cancelled"), (486, false, "busy"), (600, false, "busy"), (603, false, "rejected"),
        (480, false, "unanswered"), (408, false, "unanswered"), (487, false, "cancelled"), (404, false, "failed"), (503, false, "failed"),
    ] as [(Int?, Bool, String)])
    func outcomes(status: Int?, answered: Bool, leg: String) {
        #expect(LineCallMedia.legStatus(sipStatus: status, answered: answered) == leg)
    }
}
