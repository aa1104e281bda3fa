import Media

/// How a player plays.
public struct PlayerOptions: Sendable, Hashable {
    /// Times to play; 0 repeats until stopped.
    public var loop = 1
    /// −1 (silent) … 0 (as is) … 1 (twice as loud).
    public var level = 0.0
    /// When set, only these participants hear the player (a talk into one leg).
    public var heardBy: [MixerParticipantID]?

    public init(loop: Int = 1, level: Double = 0, heardBy: [MixerParticipantID]? = nil) {
        self.loop = loop
        self.level = level
        self.heardBy = heardBy
    }

    /// The mixer volume for `level`.
    var volume: Float { Float(max(0, min(2, 1 + level))) }
}
