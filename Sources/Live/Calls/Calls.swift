/// Calls in progress and their legs: where telephony and the NCCO engine (a later issue) will keep
/// them. Nothing places or answers calls yet, so this holds no state and does nothing; it exists
/// so the owner of live state has its place for them.
public final class Calls: Sendable {
    public init() {}

    /// Calls in progress: none until telephony exists.
    public var active: [Call] { [] }
}
