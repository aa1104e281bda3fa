/// What the jitter buffer did with one arriving packet.
public enum JitterInsertResult: Equatable, Sendable {
    case accepted
    /// The same sequence number is held or was already played.
    case duplicate
    /// Its turn has passed (played or concealed already); the buffer grows its delay.
    case late
    /// The payload exceeds the configured slot size.
    case tooLarge
    /// A jump far outside the window (a sender restart): the buffer started over from this packet.
    case restarted
}
