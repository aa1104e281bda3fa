import Audio

/// What a player plays into a mixer.
public enum PlayerSource: Sendable, Hashable {
    /// Text (or SSML) spoken by the synthesizer.
    case speech(SpeechRequest)
    /// An http(s) URL of a WAV, MP3 or Ogg Opus file, fetched with the player's size and time limits.
    case url(String)
    /// A WAV, MP3 or Ogg Opus file on this server.
    case file(String)
    /// A tone cadence; a repeating one plays for `milliseconds`.
    case tone(ToneCadence, milliseconds: Int)

    var kind: PlayerKind {
        switch self {
        case .speech: .say
        case .url, .file: .play
        case .tone: .tone
        }
    }
}
