/// Why a text-to-speech request failed.
public enum SpeechError: Error, Equatable, Sendable {
    /// The language code has no voice (Vonage code, e.g. "en-US").
    case unknownLanguage(String)
    /// The style index is outside the language's styles.
    case unknownStyle(language: String, style: Int, available: Int)
    /// The SSML could not be read.
    case invalidSSML(String)
    /// Text longer than the request limit.
    case tooLong(characters: Int, limit: Int)
    /// The speech engine could not start or failed (its code).
    case engineFailed(Int32)
}
