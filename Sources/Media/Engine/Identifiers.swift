import Crypto

/// Typed ids of media objects; the control plane keys its maps by these, never by bare strings.
public struct RouterID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    static func random() -> RouterID { RouterID(rawValue: "rt-" + SystemRandom().hex(8)) }
}

public struct TransportID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    static func random() -> TransportID { TransportID(rawValue: "tp-" + SystemRandom().hex(8)) }
}

public struct ProducerID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    static func random() -> ProducerID { ProducerID(rawValue: "pr-" + SystemRandom().hex(8)) }
}

public struct ConsumerID: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
    static func random() -> ConsumerID { ConsumerID(rawValue: "cn-" + SystemRandom().hex(8)) }
}
