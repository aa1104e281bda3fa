/// What one participant should be sent after a mixer tick.
public enum MixerOutput: Sendable, Hashable {
    /// Nothing audible (earmuffed, alone, or nobody speaking it may hear).
    case silence
    /// The one mix shared by every listener who is not mixed: encode it once for all of them.
    case shared
    /// Its own mix in `MixerCore.output(for:)`: mix-minus-self for a mixed speaker, or a mix
    /// restricted by canHear/canSpeak.
    case own
}
