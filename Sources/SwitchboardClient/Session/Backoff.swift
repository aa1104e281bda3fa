/// Reconnect delays: doubling from `first` up to `maximum`, each drawn between half and all of
/// it so clients dropped together do not return together (the same schedule as the web client).
public struct Backoff: Sendable, Hashable {
    public var first: Duration
    public var maximum: Duration
    public private(set) var attempt = 0

    public init(first: Duration = .milliseconds(500), maximum: Duration = .seconds(10)) {
        self.first = first
        self.maximum = maximum
    }

    /// The next delay; `unit` is a random number in 0..<1 (injected, so tests can pin it).
    public mutating func next(unit: Double) -> Duration {
        let doublings = min(attempt, 30)
        attempt += 1
        let base = min(maximum, first * (1 << doublings))
        return base / 2 + base * (max(0, min(1, unit)) / 2)
    }

    /// After a connection that stayed up: start again from `first`.
    public mutating func reset() { attempt = 0 }
}
