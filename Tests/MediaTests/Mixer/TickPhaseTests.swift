import Testing
@testable import Media

/// The worker's tick settling just after a speaker's arrivals (pure: times in, steps out).
@Suite("Tick phase")
struct TickPhaseTests {
    static let ms: UInt64 = 1_000_000
    /// The margin with no jitter, milliseconds.
    static let margin = Double(TickPhase.baseMargin) / 1e6

    /// Ticks every 20 ms plus the steps asked for, a speaker's packets arriving every 20 ms at
    /// `arrivalPhase` (plus `late` on the packets it names, the first tick's newest being packet 49); returns the waits (tick − newest arrival)
    /// and the intervals between ticks, in milliseconds.
    func run(ticks: Int, arrivalPhase: UInt64, jitter: Double = 0, late: [Int: UInt64] = [:]) -> (waits: [Double], intervals: [Double], phase: TickPhase) {
        var phase = TickPhase()
        var tick: UInt64 = 1_000 * Self.ms
        var waits: [Double] = [], intervals: [Double] = []
        for _ in 0..<ticks {
            // The newest arrival at or before this tick.
            var k = (tick - arrivalPhase) / (20 * Self.ms)
            var arrival = k * 20 * Self.ms + arrivalPhase + (late[Int(k)] ?? 0)
            while arrival > tick {
                k -= 1
                arrival = k * 20 * Self.ms + arrivalPhase + (late[Int(k)] ?? 0)
            }
            waits.append(Double(tick - arrival) / 1e6)
            let step = phase.step(tick: tick, arrival: arrival, jitterMilliseconds: jitter)
            let next = UInt64(Int64(tick + 20 * Self.ms) + step)
            intervals.append(Double(next - tick) / 1e6)
            tick = next
        }
        return (waits, intervals, phase)
    }

    @Test("a tick 13 ms after the arrivals moves, a millisecond per tick, to the margin after them")
    func settles() {
        // Ticks at ...000 ms, packets at ...007 ms: each waits 13 ms.
        let r = run(ticks: 60, arrivalPhase: 7 * Self.ms)
        #expect(r.waits[0] == 13)
        for wait in r.waits.suffix(20) { #expect(abs(wait - Self.margin) <= 0.6, "settled wait \(wait) ms") }
        for interval in r.intervals { #expect(interval >= 19 && interval <= 20.001, "interval \(interval) ms") }
    }

    @Test("arrivals just after the tick: it moves earlier to them without ever running ahead of one")
    func nearlyLate() {
        // Packets 0.2 ms after each tick: each waits 19.8 ms for the next.
        let r = run(ticks: 60, arrivalPhase: 200_000)
        #expect(r.waits[0] == 19.8)
        for wait in r.waits { #expect(wait >= 0.4, "wait \(wait) ms: a tick ran ahead of an arrival") }
        for wait in r.waits.suffix(10) { #expect(abs(wait - Self.margin) <= 0.6, "settled wait \(wait) ms") }
        for interval in r.intervals { #expect(interval >= 19 && interval <= 20.001, "interval \(interval) ms") }
    }

    @Test("a packet that misses its tick moves the next tick a step later")
    func missed() {
        var phase = TickPhase()
        #expect(phase.step(tick: 100 * Self.ms, arrival: 95 * Self.ms, jitterMilliseconds: 0) == 0)  // the first tick only looks
        // The packet due at 115 ms comes after the tick at 120 ms: the newest is still the one of 95 ms.
        #expect(phase.step(tick: 120 * Self.ms, arrival: 95 * Self.ms, jitterMilliseconds: 0) == 1_000_000)
        #expect(phase.steps == 1)
        #expect(phase.missed == 1, "counted as a tick run without its packet")
    }

    @Test("jitter widens the margin; a settled phase stays put, and one late packet does not throw it")
    func jitterAndLate() {
        // Waits of 15 ms at first; the margin is the base margin + 3 × 1.5 ms.
        let r = run(ticks: 80, arrivalPhase: 5 * Self.ms, jitter: 1.5)
        #expect(r.waits[0] == 15)
        for wait in r.waits.suffix(10) { #expect(abs(wait - (Self.margin + 4.5)) <= 0.6, "settled wait \(wait) ms") }
        // Packet 119 (about the 70th tick) comes 3 ms late: the tick waits for it a little longer after.
        let steady = run(ticks: 80, arrivalPhase: 5 * Self.ms, jitter: 1.5, late: [119: 3 * Self.ms])
        #expect(steady.waits.contains { $0 < Self.margin + 4.5 - 2 }, "the late packet was seen: \(steady.waits.suffix(12))")
        #expect(steady.waits.suffix(5).allSatisfy { abs($0 - (Self.margin + 4.5)) <= 1.1 }, "\(steady.waits.suffix(12))")
    }

    @Test("a speaker silent for two ticks moves nothing")
    func stale() {
        var phase = TickPhase()
        _ = phase.step(tick: 60 * Self.ms, arrival: 55 * Self.ms, jitterMilliseconds: 0)
        #expect(phase.step(tick: 80 * Self.ms, arrival: 55 * Self.ms, jitterMilliseconds: 0) == 1_000_000, "late")
        #expect(phase.step(tick: 100 * Self.ms, arrival: 55 * Self.ms, jitterMilliseconds: 0) == 0, "silent")
        #expect(phase.step(tick: 120 * Self.ms, arrival: 0, jitterMilliseconds: 0) == 0)
        #expect(phase.steps == 1)
    }

    @Test("a tick runs on the followed packet that came as early as the margin is late, up to 5 ms early")
    func earlyWindow() {
        var phase = TickPhase()
        #expect(phase.earlyWindow == 2 * TickPhase.baseMargin, "the margin after the expected arrival and as much before it")
        _ = phase.step(tick: 100 * Self.ms, arrival: 97 * Self.ms, jitterMilliseconds: 0)
        _ = phase.step(tick: 120 * Self.ms, arrival: 117 * Self.ms, jitterMilliseconds: 0.5)
        #expect(phase.margin == TickPhase.baseMargin + 1_500_000)
        #expect(phase.earlyWindow == 2 * phase.margin, "jitter widens both sides")
        _ = phase.step(tick: 140 * Self.ms, arrival: 137 * Self.ms, jitterMilliseconds: 10)
        #expect(phase.margin == TickPhase.maxMargin)
        #expect(phase.earlyWindow == TickPhase.maxMargin + TickPhase.maxEarly, "a wide margin, and 5 ms before the expected arrival")
    }
}
