import Runtime

/// Armed transaction timers as deadlines; the owner asks for the earliest and calls `tick`.
struct TimerSet: Hashable, Sendable {
    private(set) var deadlines: [TransactionTimer: Instant] = [:]
    /// The current interval of each retransmission timer (A, E, G, 2xx), doubled on each firing.
    var intervals: [TransactionTimer: Duration] = [:]

    mutating func arm(_ timer: TransactionTimer, after delay: Duration, now: Instant) {
        deadlines[timer] = now.adding(delay)
        if [.a, .e, .g, .okRetransmit].contains(timer) { intervals[timer] = delay }
    }

    mutating func cancel(_ timer: TransactionTimer) {
        deadlines[timer] = nil
    }

    mutating func cancelAll() { deadlines.removeAll() }

    var next: Instant? { deadlines.values.min() }

    /// Removes and returns the timers due at `now`, earliest first.
    mutating func due(now: Instant) -> [TransactionTimer] {
        let fired = deadlines.filter { $0.value <= now }.sorted { $0.value < $1.value }.map(\.key)
        for t in fired { deadlines[t] = nil }
        return fired
    }
}
