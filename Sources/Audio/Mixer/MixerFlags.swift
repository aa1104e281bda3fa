/// How one participant takes part in the mix.
public struct MixerFlags: Sendable, Hashable {
    /// Not heard by anyone.
    public var muted = false
    /// Hears nothing.
    public var earmuffed = false
    /// Gain applied to this participant's voice, 0...4 (1 = as received).
    public var volume: Float = 1
    /// When set, the only participants this one hears.
    public var canHear: [MixerSlot]?
    /// When set, the only participants who hear this one.
    public var canSpeak: [MixerSlot]?

    public init(muted: Bool = false, earmuffed: Bool = false, volume: Float = 1, canHear: [MixerSlot]? = nil, canSpeak: [MixerSlot]? = nil) {
        self.muted = muted
        self.earmuffed = earmuffed
        self.volume = volume
        self.canHear = canHear
        self.canSpeak = canSpeak
    }
}
