import Wire

/// What the user agent core asks its shell to do.
public enum UserAgentOutput: Hashable, Sendable {
    case send(SIPMessage, to: SIPPeer)
    case event(CallEvent)
    /// A trunk's health or registration changed.
    case trunk(TrunkStatus)
    /// A device registration changed the bindings of an address of record (all of them, now).
    case bindings(aor: String, [Binding])
}
