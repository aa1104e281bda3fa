/// Where a call stands, as a call screen shows it.
public enum CallState: Sendable, Hashable {
    case idle
    /// The request to place the call is on its way.
    case dialing
    /// Placed and ringing the callee (outgoing), or ringing this user (incoming).
    case ringing(incoming: Bool)
    case answered
    case ended(CallEndReason)
}
