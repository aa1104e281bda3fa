/// Produces the RFC 4733 packets of one key press, one per 20 ms tick (§2.5.1): the first with
/// the RTP marker bit, each carrying the duration so far, and the end packet three times.
///
/// All packets of one event share one RTP timestamp (the event's start); the owner stamps them.
public struct TelephoneEventSender: Sendable {
    public struct Packet: Sendable, Hashable {
        public var marker: Bool
        public var event: TelephoneEvent
    }

    public let clockRate: Int
    public let volume: UInt8
    private var digit: DTMFDigit?
    private var total: Int = 0
    private var elapsed: Int = 0
    private var endsSent = 0

    /// `clockRate` of the negotiated telephone-event format (8000 with PCMU/PCMA, 48000 with Opus).
    public init(clockRate: Int = 8000, volume: UInt8 = 10) {
        self.clockRate = max(8000, clockRate)
        self.volume = volume
    }

    /// True while a key press still has packets to send.
    public var isActive: Bool { digit != nil }

    /// Starts a key press lasting `milliseconds` (at least 40, at most what 16 bits of duration hold).
    public mutating func start(_ digit: DTMFDigit, milliseconds: Int = 100) {
        self.digit = digit
        let units = max(40, milliseconds) * clockRate / 1000
        total = min(units, Int(UInt16.max))
        elapsed = 0
        endsSent = 0
    }

    /// The packet for this tick, or nil once the press and its end retransmissions are sent.
    public mutating func next() -> Packet? {
        guard let digit else { return nil }
        let step = clockRate / 50
        if elapsed < total {
            let first = elapsed == 0
            elapsed = min(total, elapsed + step)
            let ending = elapsed >= total
            if ending { endsSent = 1 }
            return Packet(marker: first, event: TelephoneEvent(digit: digit, end: ending, volume: volume, duration: UInt16(elapsed)))
        }
        endsSent += 1
        if endsSent >= 3 { self.digit = nil }
        return Packet(marker: false, event: TelephoneEvent(digit: digit, end: true, volume: volume, duration: UInt16(total)))
    }
}
