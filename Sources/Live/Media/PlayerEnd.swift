/// How a player ended.
public enum PlayerEnd: Sendable, Hashable {
    /// Played every loop to the end.
    case finished
    /// Stopped by a caller, or its mixer closed.
    case stopped
    /// Failed part way (a file that stopped decoding, the mixer refusing frames).
    case failed(String)
}
