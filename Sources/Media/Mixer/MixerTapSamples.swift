/// What a tap captured since it was last drained: interleaved when `channels` is 2.
public struct MixerTapSamples: Sendable, Hashable {
    public var samples: [Int16]
    public var channels: Int
    /// Frames lost because the ring was full (the drainer fell behind), since the tap began.
    public var dropped: UInt64
}
