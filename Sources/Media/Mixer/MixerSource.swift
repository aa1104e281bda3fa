/// Where a mixer participant's audio comes from.
public enum MixerSource: Sendable, Hashable {
    /// Listens only.
    case none
    /// A WebRTC producer in the mixer's router (Opus), through a jitter buffer.
    case producer(ProducerID)
    /// Frames queued by the control plane (`MediaEngine.queueFrames`): speech, files, tones.
    case frames
}
