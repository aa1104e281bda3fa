import Runtime

/// The RFC 3261 timer base values (§17.1.1.1, table 4): T1 is the round-trip estimate, T2 the
/// cap on non-INVITE and response retransmission intervals, T4 how long a message may linger.
public struct SIPTimers: Hashable, Sendable {
    public var t1: Duration
    public var t2: Duration
    public var t4: Duration

    public init(t1: Duration = .milliseconds(500), t2: Duration = .seconds(4), t4: Duration = .seconds(5)) {
        self.t1 = t1
        self.t2 = t2
        self.t4 = t4
    }

    /// Timers B, F, H, J, L, M: 64·T1.
    public var transactionTimeout: Duration { t1 * 64 }
    /// Timer D on unreliable transports (at least 32 s).
    public var timerD: Duration { max(.seconds(32), t1 * 64) }

    public static let `default` = SIPTimers()
}
