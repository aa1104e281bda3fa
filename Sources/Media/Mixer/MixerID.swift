import Crypto

/// A mixer on a media worker.
public struct MixerID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    static func random() -> MixerID { MixerID(rawValue: "mx-" + SystemRandom().hex(8)) }
}

/// Someone (or something: a player, a recorder) taking part in a mixer; chosen by the caller.
public struct MixerParticipantID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ value: String) { rawValue = value }
    public var description: String { rawValue }
}

/// A tap on a mixer; chosen by the caller.
public struct MixerTapID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ value: String) { rawValue = value }
    public var description: String { rawValue }
}
