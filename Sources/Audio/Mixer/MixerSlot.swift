/// A participant's place in a `MixerCore` (0..<capacity); the owner maps its participant IDs to slots.
public struct MixerSlot: RawRepresentable, Hashable, Sendable, Comparable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    public init(_ value: Int) { rawValue = value }
    public static func < (a: MixerSlot, b: MixerSlot) -> Bool { a.rawValue < b.rawValue }
}
