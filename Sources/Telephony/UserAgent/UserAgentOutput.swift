import Wire

/// What the user agent core asks its shell to do.
public enum UserAgentOutput: Hashable, Sendable {
    case send(SIPMessage, to: SIPPeer)
    case event(CallEvent)
    /// A trunk's health or registration changed.
    case trunk(TrunkStatus)
}
