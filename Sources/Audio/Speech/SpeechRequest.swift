/// What to say: the Voice API talk action's text, language and style.
public struct SpeechRequest: Sendable, Hashable {
    /// Plain text, or SSML when it starts with `<speak`.
    public var text: String
    /// Vonage language code, e.g. "en-US".
    public var language: String
    /// Voice variant index (0 = the language's default voice).
    public var style: Int
    /// Words per minute (espeak-ng accepts 80...450).
    public var wordsPerMinute: Int

    /// The talk action's limit on text length.
    public static let maximumCharacters = 1500

    public init(text: String, language: String = "en-US", style: Int = 0, wordsPerMinute: Int = 165) {
        self.text = text
        self.language = language
        self.style = style
        self.wordsPerMinute = wordsPerMinute
    }
}
