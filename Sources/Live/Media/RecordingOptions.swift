import Media

/// What and how to record.
public struct RecordingOptions: Sendable, Hashable {
    public var format: AudioFileKind = .mp3
    /// What one participant hears instead of the shared mix.
    public var participant: MixerParticipantID?
    /// Stereo: what `participant` says on the left, what it hears on the right (WAV only).
    public var split = false
    /// Without `split`, 2…32: each speaker on a channel of its own (`participant` on the first, the others
    /// in the order they are first heard, any beyond the last channel added to it; WAV only).
    public var channels = 1
    /// Seconds of silence that end the recording (3…10); nil: silence does not.
    public var endOnSilence: Int?
    /// The longest recording, seconds (3…7200).
    public var timeOut = 7200
    /// A 1 kHz beep into the mixer as the recording starts (heard, and recorded).
    public var beepStart = false
    /// Who may hear the beep (nil: everyone).
    public var beepHeardBy: [MixerParticipantID]?

    public init(format: AudioFileKind = .mp3, participant: MixerParticipantID? = nil, split: Bool = false,
                endOnSilence: Int? = nil, timeOut: Int = 7200, beepStart: Bool = false) {
        self.format = format
        self.participant = participant
        self.split = split
        self.endOnSilence = endOnSilence
        self.timeOut = timeOut
        self.beepStart = beepStart
    }
}
