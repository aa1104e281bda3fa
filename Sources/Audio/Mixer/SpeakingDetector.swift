/// Speaking on/off from per-frame audio levels, with hysteresis: on after `onFrames` frames louder
/// than `onLevel`, off after `offFrames` frames quieter than `offLevel`, so pauses between words do
/// not flap the state and a cough does not start it.
public struct SpeakingDetector: Sendable, Hashable {
    /// Levels are RFC 6464 −dBov: smaller is louder.
    public var onLevel: UInt8 = 45
    public var offLevel: UInt8 = 55
    public var onFrames = 3
    public var offFrames = 25
    public private(set) var isSpeaking = false
    private var run = 0

    public init() {}

    /// Feeds one frame's level; returns true when the state changed.
    public mutating func update(level: UInt8) -> Bool {
        if isSpeaking {
            run = level > offLevel ? run + 1 : 0
            if run >= offFrames { isSpeaking = false; run = 0; return true }
        } else {
            run = level <= onLevel ? run + 1 : 0
            if run >= onFrames { isSpeaking = true; run = 0; return true }
        }
        return false
    }
}
