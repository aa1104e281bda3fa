import Audio

/// The frames of one player at the mixer's rate, loop after loop; owned by the player's feeding task.
final class PlayerFrames {
    enum Content {
        case frames([AudioFrame])
        case file(path: String)
        case tone(ToneCadence, frames: Int)
    }

    let content: Content
    let rate: SampleRate
    private var index = 0
    private var playback: FilePlayback?
    private var tone: ToneGenerator?

    init(_ content: Content, rate: SampleRate) throws(AudioFileError) {
        self.content = content
        self.rate = rate
        try rewind()
    }

    /// Back to the start for another loop.
    func rewind() throws(AudioFileError) {
        index = 0
        switch content {
        case .frames: break
        case .file(let path): playback = try FilePlayback(try PlayerFrames.reader(path: path), rate: rate)
        case .tone(let cadence, _): tone = ToneGenerator(cadence, rate: rate)
        }
    }

    /// The next 20 ms into `frame`; false at the end of this loop.
    func next(into frame: inout AudioFrame) throws(AudioFileError) -> Bool {
        switch content {
        case .frames(let frames):
            guard index < frames.count else { return false }
            frame = frames[index]
            index += 1
            return true
        case .file:
            guard let playback else { return false }
            return try playback.next(into: &frame)
        case .tone(_, let total):
            guard index < total, var generator = tone, !generator.isFinished else { return false }
            generator.fill(&frame)
            tone = generator
            index += 1
            return true
        }
    }

    /// A reader for a WAV, MP3 or Ogg Opus file, chosen by its first bytes.
    static func reader(path: String) throws(AudioFileError) -> any AudioFileReader {
        switch try AudioFileKind.sniff(path: path) {
        case .wav: return try WAVFileReader(path: path)
        case .mp3: return try MP3FileReader(path: path)
        case .ogg: return try OggOpusFileReader(path: path)
        case nil: throw .noAudio
        }
    }
}
