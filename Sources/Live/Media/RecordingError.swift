import Audio
import Media

/// Why a recording could not start.
public enum RecordingError: Error, Sendable, Equatable, CustomStringConvertible {
    case invalid(String)
    case file(AudioFileError)
    case media(MediaError)

    public var description: String {
        switch self {
        case .invalid(let what): what
        case .file(let e): "recording file: \(e)"
        case .media(let e): "mixer: \(e)"
        }
    }
}
