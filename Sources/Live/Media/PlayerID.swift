import Crypto
import Media

/// One player (speech, file, tone) feeding a mixer.
public struct PlayerID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    static func random() -> PlayerID { PlayerID(rawValue: "pl-" + SystemRandom().hex(8)) }
    /// The player's participant in the mixer.
    var participant: MixerParticipantID { MixerParticipantID(rawValue) }
}
