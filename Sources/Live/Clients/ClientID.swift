/// One client connection as Live knows it: the realtime socket a member's or a video participant's
/// requests arrive on. Opaque and never reused; the API layer maps it to its socket, so nothing in
/// Live holds a socket or imports the realtime gateway.
public struct ClientID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "client-\(rawValue)" }
}
