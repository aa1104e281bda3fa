import Audio
import Runtime
import Synchronization
import Testing
import Wire
@testable import API
@testable import Telephony

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

    @Test("nothing is mixed until two frames wait; then one per tick in order; a late frame adds a frame of cushion")
    func priming() {
        var q = LineQueue()
        q.push(frame(1))
        #expect(take(&q) == nil, "one frame is not enough to start")
        q.push(frame(2))
        #expect(take(&q) == 1)
        #expect(take(&q) == 2)
        #expect(take(&q) == nil, "ran dry")
        q.push(frame(3))
        #expect(q.underruns == 1 && q.cushion == 2, "the next frame came one tick late")
        #expect(take(&q) == nil, "primes again, now with three frames")
        q.push(frame(4))
        #expect(take(&q) == nil)
        q.push(frame(5))
        #expect(take(&q) == 3)
    }

    @Test("a far end that pauses longer than the cushion could cover is not jitter: the cushion stays")
    func pauseIsNotJitter() {
        var q = LineQueue()
        q.push(frame(1)); q.push(frame(2))
        #expect(take(&q) == 1 && take(&q) == 2)
        for _ in 0..<(LineQueue.maxCushion + 2) { #expect(take(&q) == nil) }
        q.push(frame(3))
        #expect(q.underruns == 0 && q.cushion == 1)
    }

    /// `ticks` ticks of a steady far end: one frame arrives (quiet, or `loud`), one is taken.
    func steady(_ q: inout LineQueue, ticks: Int, loud: Bool = false) {
        for _ in 0..<ticks {
            q.push(frame(loud ? 12_000 : 7))
            _ = take(&q)
        }
    }

    @Test("the delay does not creep: a frame more than the cushion needs, waiting for 3 s, is trimmed once")
    func trimsGrownDelay() {
        var q = LineQueue()
        q.push(frame(1)); q.push(frame(2))
        #expect(take(&q) == 1)
        q.push(frame(3))  // two frames in one tick: from now on one more waits than the cushion needs
        steady(&q, ticks: (LineQueue.trimAfter - 1) * LineQueue.window)
        #expect(q.trimmed == 0, "not before three whole windows")
        steady(&q, ticks: 2 * LineQueue.window)
        #expect(q.trimmed == 1)
        steady(&q, ticks: 10 * LineQueue.window)
        #expect(q.trimmed == 1 && q.dropped == 0 && q.underruns == 0, "two frames waiting at each tick: nothing more goes")
    }

    @Test("a far end that never pauses keeps a small excess of delay; a large one is trimmed even when loud")
    func loudFramesAreTrimmedOnlyForALargeExcess() {
        var q = LineQueue()
        q.push(frame(12_000)); q.push(frame(12_000))
        #expect(take(&q) == 12_000)
        q.push(frame(12_000))
        steady(&q, ticks: 10 * LineQueue.window, loud: true)
        #expect(q.trimmed == 0, "one frame of extra delay is not worth a loud frame")
        steady(&q, ticks: 1, loud: false)
        steady(&q, ticks: LineQueue.window, loud: false)
        #expect(q.trimmed == 1, "the first quiet frame goes")
        for _ in 0..<(LineQueue.loudExcess + 1) { q.push(frame(12_000)) }
        steady(&q, ticks: (LineQueue.trimAfter + 1) * LineQueue.window, loud: true)
        #expect(q.trimmed == 2)
        #expect(q.dropped == 0)
    }

    @Test("a cushion grown by late frames shrinks after 30 calm seconds, and the delay follows")
    func cushionShrinks() {
        var q = LineQueue()
        q.push(frame(1)); q.push(frame(2))
        for _ in 0..<2 {
            while take(&q) != nil {}
            q.push(frame(1))  // one tick late
            while take(&q) == nil { q.push(frame(1)) }
        }
        #expect(q.cushion == 3 && q.underruns == 2)
        steady(&q, ticks: LineQueue.shrinkAfter * LineQueue.window + 4 * LineQueue.window)
        #expect(q.cushion == 2)
        #expect(q.trimmed == 1, "one frame fewer waits once the cushion is smaller")
        #expect(q.underruns == 2 && q.dropped == 0)
    }

    @Test("a far end faster than the ticks loses its oldest frames, counted; a wrong-sized frame is ignored")
    func overflow() {
        var q = LineQueue()
        q.push(frame(1)); q.push(frame(2))
        #expect(take(&q) == 1)
        for v in 3...Int16(LineQueue.capacity + 4) { q.push(frame(v)) }
        #expect(q.dropped == 3)
        #expect(take(&q) == 5, "the three oldest went")
        q.push(AudioFrame(rate: .hz8000))
        var pulled = 0
        while take(&q) != nil { pulled += 1 }
        #expect(pulled == LineQueue.capacity - 1)
    }

    @Test("what waited before mixing first started is stale and not loss; a burst after running dry is loss")
    func staleBeforeMixing() {
        var q = LineQueue()
        for v in 1...Int16(LineQueue.capacity + 2) { q.push(frame(v)) }
        #expect(q.unmixed == 2 && q.dropped == 0, "a full queue before the first tick: the oldest go, not counted as dropped")
        #expect(take(&q) == Int16(LineQueue.capacity + 1), "mixing starts from the newest two")
        #expect(q.unmixed == LineQueue.capacity && q.trimmed == 0)
        #expect(take(&q) == Int16(LineQueue.capacity + 2))
        #expect(take(&q) == nil, "ran dry")
        for v in 1...Int16(5) { q.push(frame(v)) }
        #expect(take(&q) == 3, "the cushion grew to two: mixing starts again from the newest three")
        #expect(q.trimmed == 2 && q.unmixed == LineQueue.capacity, "heard by nobody after the line was mixed: loss")
    }

    @Test("a phone's queue holds frames at the phone's rate")
    func narrowbandFrames() {
        var q = LineQueue(rate: .hz8000)
        var f = AudioFrame(rate: .hz8000)
        f.withMutableSamples { s in for i in 0..<s.count { s[i] = Int16(i) } }
        q.push(f); q.push(f)
        q.push(frame(9))
        var out = AudioFrame(rate: .hz8000)
        let first = q.pull(into: &out)
        #expect(first && out.withSamples { $0[159] } == 159)
        let second = q.pull(into: &out), third = q.pull(into: &out)
        #expect(second && !third, "the 48 kHz frame was ignored")
    }

    @Test("SIP final responses become the documented leg statuses", arguments: [
        (nil, true, "completed"), (nil, false, "cancelled"), (486, false, "busy"), (600, false, "busy"), (603, false, "rejected"),
        (480, false, "unanswered"), (408, false, "unanswered"), (487, false, "cancelled"), (404, false, "failed"), (503, false, "failed"),
    ] as [(Int?, Bool, String)])
    func outcomes(status: Int?, answered: Bool, leg: String) {
        #expect(LineCallMedia.legStatus(sipStatus: status, answered: answered) == leg)
    }

    @Test("an armed line whose far end sends nothing past the limit calls for a hangup once; not before it is armed, not while held")
    func silentPeer() async throws {
        let loop = EventLoop()
        loop.startThread(name: "line-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 42_000...42_099)
        @Sendable func negotiated(_ direction: SDPDirection) -> NegotiatedAudio {
            NegotiatedAudio(remoteAddress: "127.0.0.1", remotePort: 9, codec: .pcmu, payloadType: 0, telephoneEventPayloadType: 101,
                            ptime: 20, direction: direction)
        }
        let fired = try await loop.submit { () throws -> [Int] in
            let second: UInt64 = 1_000_000_000
            var fired = [0, 0]
            let talking = try PhoneLine(loop: loop, pool: pool, host: "127.0.0.1", negotiated: negotiated(.sendrecv))
            let held = try PhoneLine(loop: loop, pool: pool, host: "127.0.0.1", negotiated: negotiated(.sendonly))
            defer { [talking, held].forEach { $0.close() } }
            // Before it is armed (a call still ringing), ten silent seconds are nothing.
            for t in stride(from: UInt64(0), through: 10 * second, by: Int(second / 2)) { talking.deliver(nil, now: t) }
            talking.watchSilence(limit: 2 * second) { fired[0] += 1 }
            held.watchSilence(limit: 2 * second) { fired[1] += 1 }
            for t in stride(from: 10 * second, through: 12 * second, by: Int(second / 2)) {
                talking.deliver(nil, now: t)
                held.deliver(nil, now: t)
            }
            #expect(fired[0] == 0, "two seconds from arming is not past the limit")
            for t in stride(from: 12 * second + second / 2, through: 20 * second, by: Int(second / 2)) {
                talking.deliver(nil, now: t)
                held.deliver(nil, now: t)
            }
            return fired
        }
        #expect(fired == [1, 0], "the talking line's peer went silent once; the held one's never counts")
    }

    /// Held weakly: what a closed line's handlers captured must be free to go (a call's leg holds its line, and the
    /// line's handlers capture the leg: kept after close, the two kept each other, ~30 KiB a call).
    final class Watch: @unchecked Sendable { weak var owner: AnyObject? }

    @Test("a closed line drops its handlers and its leg's, and with them what they captured")
    func closeLetsGo() async throws {
        final class Owner: Sendable {}
        let loop = EventLoop()
        loop.startThread(name: "line-test")
        defer { loop.stop() }
        let pool = RTPPortPool(range: 42_100...42_199)
        let watch = Watch()
        let line = try await loop.submit { () throws -> PhoneLine in
            let line = try PhoneLine(loop: loop, pool: pool, host: "127.0.0.1",
                                     negotiated: NegotiatedAudio(remoteAddress: "127.0.0.1", remotePort: 9, codec: .pcmu, payloadType: 0,
                                                                 telephoneEventPayloadType: 101, ptime: 20, direction: .sendrecv))
            let owner = Owner()
            watch.owner = owner
            line.watchSilence(limit: 1_000_000_000) { _ = owner }
            line.onDigit = { _ in _ = owner }
            line.leg.onDTLSFailure = { _ in _ = owner }
            line.listenForMachine(beep: false, beepTimeout: 45) { _ in _ = owner }
            return line
        }
        #expect(watch.owner != nil)
        try await loop.submit { line.close() }
        #expect(watch.owner == nil, "a closed line still holds what its handlers captured")
        #expect(pool.inUse == 0)
    }
}
