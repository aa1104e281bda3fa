/// The PCM rates the audio path runs at: G.711 narrowband, wideband, and Opus/WebRTC fullband.
public enum SampleRate: Int, Sendable, Hashable, CaseIterable {
    case hz8000 = 8000
    case hz16000 = 16000
    case hz24000 = 24000
    case hz48000 = 48000

    /// Samples in one 20 ms frame at this rate.
    public var samplesPerFrame: Int { rawValue / 50 }

    public init?(hertz: Int) { self.init(rawValue: hertz) }
}
