/// Why the edge cannot place a call.
public enum EdgeError: Error, Hashable, Sendable {
    case stopped
    case unknownTrunk(String)
    case notRegistered(String)
    case badNumber(String)
}
