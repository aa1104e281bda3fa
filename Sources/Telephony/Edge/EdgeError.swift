/// Why the edge cannot place a call.
public enum EdgeError: Error, Hashable, Sendable {
    case stopped
    case unknownTrunk(String)
    case notRegistered(String)
    case badNumber(String)
    /// A SIP URI the edge cannot send to: none of its host's addresses is of the edge's IP version.
    case unreachable(String)
}
