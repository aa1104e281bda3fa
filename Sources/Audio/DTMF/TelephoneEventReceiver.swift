/// Turns received RFC 4733 packets into key presses: one `.began` when an event starts and one
/// `.ended` when it ends, however many updates and end retransmissions arrive (§2.5.2).
///
/// Packets of one event share an RTP timestamp, so the timestamp tells a new press of the same key
/// from a retransmitted end of the previous one.
public struct TelephoneEventReceiver: Sendable {
    public enum Event: Sendable, Hashable {
        case began(DTMFDigit)
        /// The press ended; duration in RTP timestamp units.
        case ended(DTMFDigit, duration: UInt16)
    }

    private var currentTimestamp: UInt32?
    private var currentEnded = false
    private var lastEndedTimestamp: UInt32?

    public init() {}

    /// Feeds one packet (its RTP timestamp and payload); returns what a listener should hear about.
    /// Non-DTMF events (tones, flash) are ignored.
    public mutating func receive(timestamp: UInt32, _ event: TelephoneEvent) -> [Event] {
        guard let digit = event.digit else { return [] }
        if timestamp == lastEndedTimestamp { return [] }  // retransmitted end, or an update after it
        var out: [Event] = []
        if timestamp != currentTimestamp {
            // A previous press whose end packets were all lost is superseded by this one.
            currentTimestamp = timestamp
            currentEnded = false
            out.append(.began(digit))
        }
        if event.end && !currentEnded {
            currentEnded = true
            lastEndedTimestamp = timestamp
            out.append(.ended(digit, duration: event.duration))
        }
        return out
    }
}
