/// A call leg's id (`call_id` on the realtime socket, the leg `uuid` in the Voice API).
public struct CallID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ value: String) { rawValue = value }
    public var description: String { rawValue }
}
