/// Where in its 20 ms the worker's tick deadline falls, relative to the packets of the speaker it follows.
///
/// A mixer hears a packet at the first tick after it arrives, so a listener's added latency is
/// that wait (anywhere from 0 to 20 ms, by the chance of two phases) plus the fan-out. This keeps
/// the deadline a small margin after the arrivals of one speaker (the loudest in the worker's biggest
/// mixer): each tick it measures how long before the deadline that speaker's newest packet came, and
/// moves the next deadline by at most `maxStep` toward `margin` after it. The worker runs the tick as
/// soon as that speaker's packet is in when the deadline is within `earlyWindow` (`WorkerCore.handle`),
/// so the margin is only what a late packet may use; the deadline is the fallback. The margin is three times the
/// speaker's interarrival jitter plus `baseMargin`, so a packet that comes a little late still makes
/// its tick. Steps of 1 ms make the mix's packets leave 19 or 21 ms apart while it settles, which
/// receivers take as ordinary jitter.
///
/// Pure (time in, nanoseconds out); the worker applies the step to its next deadline.
struct TickPhase {
    static let interval: Int64 = 20_000_000
    /// Covers a scheduling hiccup at either end: a packet that misses its tick is heard 20 ms later
    /// (and the jitter buffer keeps a frame more for a while), which costs more than this waits.
    static let baseMargin: Int64 = 2_500_000
    static let maxMargin: Int64 = 10_000_000
    static let maxStep: Int64 = 1_000_000
    /// Errors smaller than this are left alone (the jitter of the measurement itself).
    static let deadBand: Int64 = 500_000

    /// The smoothed distance from the wanted phase, nanoseconds: positive when the tick comes later
    /// after the arrivals than the margin asks.
    private(set) var error: Double = 0
    private(set) var steps: UInt64 = 0
    /// Ticks that ran without the followed speaker's packet, which came after them (heard a tick later).
    private(set) var missed: UInt64 = 0
    /// The margin the last measurement asked for, nanoseconds.
    private(set) var margin = TickPhase.baseMargin
    /// How long before its deadline a tick runs as soon as the followed speaker's packet is in: the margin
    /// after the expected arrival and as much before it (at most `maxEarly`), since a sender's jitter comes
    /// early as often as late (a packet that came 2 ms early would otherwise wait out the margin and the
    /// 2 ms). Always wider than the margin, so the expected arrival itself is never at its edge.
    var earlyWindow: Int64 { margin + min(margin, Self.maxEarly) }
    static let maxEarly: Int64 = 5_000_000
    private var previousTick: UInt64 = 0

    /// Starts the counts again (a benchmark's measured window).
    mutating func resetCounts() {
        steps = 0
        missed = 0
    }

    /// How far to move the next tick (negative: earlier), given that this tick ran at `tick` and the
    /// followed speaker's newest packet arrived at `arrival` with `jitterMilliseconds` of interarrival
    /// jitter.
    ///
    /// Only a packet that arrived since the previous tick is measured, and the tick only ever moves
    /// toward it: earlier while it waits longer than the margin, later while it waits less, so the
    /// tick never passes an arrival (which would leave a tick without the speaker's frame, or hold a
    /// frame more). When the speaker sent nothing since the previous tick although it was heard just
    /// before (its packet is late), the tick moves a step later; when it has been silent for two
    /// ticks, nothing moves.
    mutating func step(tick: UInt64, arrival: UInt64, jitterMilliseconds: Double) -> Int64 {
        defer { previousTick = tick }
        guard arrival > 0, previousTick > 0, tick >= arrival else { return 0 }
        guard arrival > previousTick else {
            guard tick - arrival < 2 * UInt64(Self.interval) else { return 0 }
            error = 0
            steps &+= 1
            missed &+= 1
            return Self.maxStep
        }
        margin = min(Self.maxMargin, Self.baseMargin + Int64(3 * max(0, jitterMilliseconds) * 1e6))
        let e = Int64(tick - arrival) - margin
        error += (Double(e) - error) / 4
        guard abs(error) >= Double(Self.deadBand) else { return 0 }
        let move = -min(Self.maxStep, max(-Self.maxStep, Int64(error)))
        // Moving the tick moves every later wait by as much.
        error += Double(move)
        steps &+= 1
        return move
    }
}
