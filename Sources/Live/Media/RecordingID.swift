import Crypto

/// One recording of a mixer, addressable over REST.
public struct RecordingID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    static func random() -> RecordingID { RecordingID(rawValue: "rec-" + SystemRandom().hex(12)) }

    /// Ids this server makes: `rec-` and hex (so an id never names a path outside the directory).
    public var isWellFormed: Bool {
        rawValue.hasPrefix("rec-") && rawValue.count <= 40 && rawValue.dropFirst(4).allSatisfy { $0.isHexDigit }
    }
}
