/// Vonage Voice API `language` codes and the espeak-ng voices that speak them.
///
/// A `style` picks a voice variant (a different pitch and timbre): style 0 is the language's plain
/// voice, style n the n-th entry of `variants`.
public struct SpeechLanguage: Sendable, Hashable {
    public let code: String
    /// espeak-ng voice file name (what `espeak_SetVoiceByName` matches, case-insensitively).
    public let voice: String

    /// espeak-ng variants, offered as styles 1…n.
    public static let variants = ["f2", "m3", "f3", "m4", "m2", "f4", "f5", "m5"]

    /// Styles per language: 0 plus one per variant.
    public static var styleCount: Int { variants.count + 1 }

    static let voices: [String: String] = [
        "en-US": "en-us", "en-GB": "en", "en-AU": "en", "en-IN": "en", "en-ZA": "en", "en-GB-WLS": "en-gb-x-gbcwmd",
        "es-ES": "es", "es-MX": "es-419", "es-US": "es-419",
        "fr-FR": "fr", "fr-CA": "fr", "pt-BR": "pt-br", "pt-PT": "pt",
        "de-DE": "de", "it-IT": "it", "nl-NL": "nl", "sv-SE": "sv", "da-DK": "da", "nb-NO": "nb", "fi-FI": "fi",
        "pl-PL": "pl", "cs-CZ": "cs", "ro-RO": "ro", "hu-HU": "hu", "tr-TR": "tr", "el-GR": "el", "ru-RU": "ru", "uk-UA": "uk",
        "ja-JP": "ja", "ko-KR": "ko", "cmn-CN": "cmn", "zh-CN": "cmn", "yue-CN": "yue", "hi-IN": "hi", "ar": "ar",
        "id-ID": "id", "vi-VN": "vi", "is-IS": "is", "cy-GB": "cy",
    ]

    /// Every supported language code.
    public static var supportedCodes: [String] { voices.keys.sorted() }

    /// The voice for a Vonage language code (case-insensitive).
    public init(code: String) throws(SpeechError) {
        guard let match = Self.voices.first(where: { $0.key.lowercased() == code.lowercased() }) else {
            throw .unknownLanguage(code)
        }
        self.code = match.key
        voice = match.value
    }

    /// The espeak-ng voice name for a style ("en-us+f2").
    public func voiceName(style: Int) throws(SpeechError) -> String {
        guard style >= 0 && style < Self.styleCount else {
            throw .unknownStyle(language: code, style: style, available: Self.styleCount)
        }
        return style == 0 ? voice : "\(voice)+\(Self.variants[style - 1])"
    }
}
