import Audio
import Media

/// Why a player could not start.
public enum PlayerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Unknown language or style, bad SSML, text too long.
    case speech(SpeechError)
    /// The file could not be opened or decoded.
    case file(AudioFileError)
    /// Not WAV, MP3 or Ogg Opus (by its first bytes).
    case unsupportedFormat
    /// The URL could not be fetched (bad URL, refused, timed out, too large).
    case fetch(url: String, reason: String)
    /// The server answered with a non-2xx status.
    case status(url: String, code: Int)
    /// Options out of range.
    case invalid(String)
    /// The mixer refused (gone, full).
    case media(MediaError)

    public var description: String {
        switch self {
        case .speech(let e): "speech: \(e)"
        case .file(let e): "audio file: \(e)"
        case .unsupportedFormat: "the audio is not WAV, MP3 or Ogg Opus"
        case .fetch(let url, let reason): "could not fetch \(url): \(reason)"
        case .status(let url, let code): "\(url) answered \(code)"
        case .invalid(let what): what
        case .media(let e): "mixer: \(e)"
        }
    }
}
