import Testing
@testable import Media

/// The Video API's audio fallback, as a subscriber's or a publisher's link's loss drives it.
@Suite("Audio fallback")
struct AudioFallbackTests {
    /// Feeds `steps` (seconds, poor, good: neither is fair) in order; the events, each with its time.
    static func run(_ fallback: inout AudioFallback, _ steps: [(Double, Bool, Bool)]) -> [(Double, AudioFallback.Event)] {
        steps.compactMap { time, poor, good in
            fallback.update(poor ? .poor : good ? .good : .fair, now: UInt64(time * 1e9)).map { (time, $0) }
        }
    }

    static func series(from: Double, to: Double, poor: Bool, good: Bool) -> [(Double, Bool, Bool)] {
        stride(from: from, to: to, by: 0.5).map { ($0, poor, good) }
    }

    @Test("a lossy link is warned of after 2 s, the video turned off after 5 s; a probe after the hold turns it on again once it is good for 3 s")
    func offAndOn() {
        var f = AudioFallback()
        let events = Self.run(&f, Self.series(from: 1, to: 10, poor: true, good: false))
        #expect(events.map(\.1) == [.disableWarning, .disabled])
        #expect(events.map(\.0) == [3, 6])
        #expect(!f.sendsVideo && f.state == .disabled)
        // The hold (10 s) before the first probe; the link is good now.
        let probe = Self.run(&f, Self.series(from: 10, to: 22, poor: false, good: true))
        #expect(probe.map(\.1) == [.probeStarted, .enabled])
        #expect(probe.map(\.0) == [16, 19.5], "a probe at 6 + 10 s, judged afresh from its next report: good for 3 s")
        #expect(f.sendsVideo && f.state == .normal && f.hold == AudioFallback.minimumHold)
    }

    @Test("a warning is lifted after 3 s of a good link; a moment's loss or a good moment changes nothing")
    func warningLifted() {
        var f = AudioFallback()
        var steps = Self.series(from: 0.5, to: 2.5, poor: true, good: false)
        steps += [(2.5, false, true), (3, true, false)]  // a good moment: the poor time starts again
        steps += Self.series(from: 3.5, to: 6, poor: true, good: false)
        #expect(Self.run(&f, steps).map(\.1) == [.disableWarning], "warned at 5 s: two seconds of the second poor run")
        #expect(Self.run(&f, Self.series(from: 6, to: 8.5, poor: false, good: true)).isEmpty)
        #expect(Self.run(&f, [(9, false, true)]).map(\.1) == [.disableWarningLifted])
        // Neither poor nor good: nothing happens.
        #expect(Self.run(&f, Self.series(from: 10, to: 40, poor: false, good: false)).isEmpty && f.state == .normal)
        // Nothing to judge by (no video expected, a larger layer tried) between poor seconds: the poor time runs on.
        #expect(Self.run(&f, [(40, true, false)]).isEmpty)
        #expect(f.update(nil, now: 41_000_000_000) == nil && f.update(.poor, now: 42_000_000_000) == .disableWarning)
        #expect(AudioFallback.Verdict(lost: 11, expected: 100) == .poor && AudioFallback.Verdict(lost: 3, expected: 100) == .good)
        #expect(AudioFallback.Verdict(lost: 5, expected: 100) == .fair && AudioFallback.Verdict(lost: 0, expected: 0) == .good)
    }

    @Test("a probe on a link still lossy fails after its window and the hold doubles, up to 80 s; reset goes back to normal")
    func failedProbes() {
        var f = AudioFallback()
        _ = Self.run(&f, Self.series(from: 1, to: 6.5, poor: true, good: false))
        #expect(f.state == .disabled)
        let events = Self.run(&f, Self.series(from: 6.5, to: 200, poor: true, good: false))
        let starts = events.filter { $0.1 == .probeStarted }.map(\.0)
        #expect(events.filter { $0.1 == .probeFailed }.count == starts.count)
        // Off at 6 s: probes 10 s later, then each a window (6 s) and a doubled hold later: 20, 40, 80, 80 s.
        #expect(starts == [16, 42, 88, 174], "\(events)")
        #expect(f.hold == AudioFallback.maximumHold)
        f.reset()
        #expect(f.state == .normal && f.sendsVideo && f.hold == AudioFallback.maximumHold)
    }

    @Test("loss is judged over windows of a second or more from cumulative counts, long enough for 20 packets (up to 5 s)")
    func lossWindows() {
        var w = LossWindow()
        let second: UInt64 = 1_000_000_000
        w.update(expected: 1000, lost: 50, now: 10 * second)
        #expect(w.verdict == nil, "the first count starts a window")
        w.update(expected: 1100, lost: 80, now: 10 * second + second / 2)
        #expect(w.verdict == nil, "half a second: not judged yet")
        w.update(expected: 1100, lost: 80, now: 11 * second)
        #expect(w.verdict == .poor, "30 of the window's 100 lost (what came before it does not count)")
        w.update(expected: 1200, lost: 82, now: 12 * second)
        #expect(w.verdict == .good, "2 of 100")
        w.update(expected: 1300, lost: 88, now: 13 * second)
        #expect(w.verdict == .fair, "6 of 100")
        w.update(expected: 1310, lost: 88, now: 14 * second)
        #expect(w.verdict == nil && w.lastJudged == .fair, "10 expected: too few to judge yet (the last judgement kept)")
        w.update(expected: 1325, lost: 96, now: 15 * second)
        #expect(w.verdict == .poor, "a starved stream judged over two seconds: 8 of 25")
        w.update(expected: 1335, lost: 96, now: 17 * second)
        w.update(expected: 1335, lost: 96, now: 20 * second + 1)
        #expect(w.verdict == nil && w.lastJudged == nil, "a stream that stopped: nothing judged, the window dropped after 5 s")
        w.update(expected: 1435, lost: 78, now: 21 * second + 1)
        #expect(w.verdict == .good, "late repairs taking the count back are no loss")
        w.reset()
        #expect(w.verdict == nil)
        w.update(expected: 2000, lost: 500, now: 16 * second)
        w.update(expected: 2100, lost: 500, now: 17 * second)
        #expect(w.verdict == .good, "judged afresh after a reset")
    }
}
