/// How one participant takes part in a mix, in participant ids (the worker maps them to slots).
public struct MixerParticipantOptions: Sendable, Hashable {
    /// Not heard by anyone.
    public var muted = false
    /// Hears nothing.
    public var earmuffed = false
    /// Gain on this participant's voice, 0...4 (1 = as received).
    public var volume: Float = 1
    /// When set, the only participants this one hears.
    public var canHear: [MixerParticipantID]?
    /// When set, the only participants who hear this one.
    public var canSpeak: [MixerParticipantID]?

    public init(muted: Bool = false, earmuffed: Bool = false, volume: Float = 1,
                canHear: [MixerParticipantID]? = nil, canSpeak: [MixerParticipantID]? = nil) {
        self.muted = muted
        self.earmuffed = earmuffed
        self.volume = volume
        self.canHear = canHear
        self.canSpeak = canSpeak
    }
}
