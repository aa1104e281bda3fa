/// Why an audio file could not be read or written.
public enum AudioFileError: Error, Equatable, Sendable {
    case open(path: String, errno: Int32)
    case read(errno: Int32)
    case write(errno: Int32)
    case wav(WAVError)
    /// libmpg123 refused the stream (its message).
    case mp3(String)
    /// libopusfile / libopusenc refused the stream (their error code).
    case opus(Int32)
    /// libmp3lame failed (its code).
    case mp3Encoder(Int32)
    /// The file holds no audio frames at all.
    case noAudio
    case closed
}
