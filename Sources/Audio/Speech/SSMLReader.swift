/// Reads the SSML subset the Voice API's talk action uses into `SpeechSegment`s.
///
/// Understood: `<speak>`, `<break time="750ms|2s" strength="…">`, `<say-as interpret-as=
/// "digits|characters|spell-out|telephone">`, `<p>` and `<s>` (a short pause after), and the five
/// XML entities. Other elements (`<prosody>`, `<emphasis>`, `<lang>`…) keep their text and drop their
/// markup. Breaks are capped at 10 s each, as SSML engines do.
public enum SSMLReader {
    public static let maximumBreakMilliseconds = 10_000
    static let maximumDepth = 32

    /// Whether a request's text is SSML (it starts with `<speak`).
    public static func isSSML(_ text: String) -> Bool {
        text.drop(while: { $0 == " " || $0 == "\n" || $0 == "\t" || $0 == "\r" }).hasPrefix("<speak")
    }

    public static func segments(_ ssml: String) throws(SpeechError) -> [SpeechSegment] {
        var out: [SpeechSegment] = []
        var text = ""
        var stack: [(name: String, interpretAs: String?)] = []
        var i = ssml.startIndex
        func flush() {
            let trimmed = text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
            // Punctuation alone says nothing.
            if trimmed.contains(where: { $0.isLetter || $0.isNumber }) { out.append(.text(trimmed)) }
            text = ""
        }
        func append(_ raw: String) {
            guard let mode = stack.last(where: { $0.interpretAs != nil })?.interpretAs, spellsOut(mode) else {
                text += raw
                return
            }
            // One character per segment with a short pause between: read as separate digits or
            // letters in every language, never as a number or a word.
            flush()
            for (k, c) in raw.filter({ !$0.isWhitespace }).enumerated() {
                if k > 0 { out.append(.pause(milliseconds: characterPauseMilliseconds)) }
                out.append(.text(String(c)))
            }
        }
        while i < ssml.endIndex {
            if ssml[i] == "<" {
                guard let close = ssml[i...].firstIndex(of: ">") else { throw .invalidSSML("unclosed tag") }
                let inner = ssml[ssml.index(after: i)..<close]
                i = ssml.index(after: close)
                if inner.hasPrefix("?") || inner.hasPrefix("!") { continue }
                let selfClosing = inner.hasSuffix("/")
                let body = selfClosing ? inner.dropLast() : inner[...]
                if body.hasPrefix("/") {
                    let name = body.dropFirst().trimmingSpaces.lowercased()
                    guard let top = stack.popLast(), top.name == name else { throw .invalidSSML("unexpected </\(name)>") }
                    if name == "p" || name == "s" { flush(); out.append(.pause(milliseconds: name == "p" ? 400 : 250)) }
                    continue
                }
                let (name, attributes) = try parseTag(body)
                switch name {
                case "break":
                    flush()
                    out.append(.pause(milliseconds: try breakLength(attributes)))
                    if !selfClosing { stack.append((name, nil)) }
                case "say-as":
                    if !selfClosing { stack.append((name, attributes["interpret-as"]?.lowercased() ?? "")) }
                case "p", "s":
                    flush()
                    if !selfClosing { stack.append((name, nil)) }
                default:
                    if !selfClosing { stack.append((name, nil)) }
                }
                guard stack.count <= maximumDepth else { throw .invalidSSML("nested deeper than \(maximumDepth)") }
            } else {
                let next = ssml[i...].firstIndex(of: "<") ?? ssml.endIndex
                append(try decodeEntities(String(ssml[i..<next])))
                i = next
            }
        }
        guard stack.isEmpty else { throw .invalidSSML("unclosed <\(stack.last!.name)>") }
        flush()
        return out
    }

    /// Plain text (not SSML) as one segment.
    public static func plain(_ text: String) -> [SpeechSegment] {
        let t = text.split(whereSeparator: { $0.isWhitespace }).joined(separator: " ")
        return t.isEmpty ? [] : [.text(t)]
    }

    /// Pause between characters read one at a time.
    public static let characterPauseMilliseconds = 120

    static func spellsOut(_ mode: String) -> Bool {
        ["digits", "telephone", "characters", "spell-out", "verbatim"].contains(mode)
    }

    static func parseTag(_ body: Substring) throws(SpeechError) -> (String, [String: String]) {
        let nameEnd = body.firstIndex(where: { $0.isWhitespace }) ?? body.endIndex
        let name = body[..<nameEnd].lowercased()
        guard !name.isEmpty else { throw .invalidSSML("empty tag") }
        var attributes: [String: String] = [:]
        var rest = body[nameEnd...]
        while let eq = rest.firstIndex(of: "=") {
            let key = rest[..<eq].trimmingSpaces.lowercased()
            var after = rest[rest.index(after: eq)...].drop(while: { $0.isWhitespace })
            guard let quote = after.first, quote == "\"" || quote == "'" else { throw .invalidSSML("attribute \(key) needs quotes") }
            after = after.dropFirst()
            guard let end = after.firstIndex(of: quote) else { throw .invalidSSML("unterminated attribute \(key)") }
            attributes[key] = String(after[..<end])
            rest = after[after.index(after: end)...]
        }
        return (name, attributes)
    }

    static func breakLength(_ attributes: [String: String]) throws(SpeechError) -> Int {
        if let time = attributes["time"]?.trimmingSpaces.lowercased() {
            let ms: Double?
            if time.hasSuffix("ms") { ms = Double(time.dropLast(2)) }
            else if time.hasSuffix("s") { ms = Double(time.dropLast()).map { $0 * 1000 } }
            else { ms = nil }
            guard let ms, ms >= 0, ms.isFinite else { throw .invalidSSML("break time \(time)") }
            return min(maximumBreakMilliseconds, Int(ms))
        }
        switch attributes["strength"]?.lowercased() ?? "medium" {
        case "none": return 0
        case "x-weak": return 100
        case "weak": return 250
        case "medium": return 500
        case "strong": return 750
        case "x-strong": return 1000
        case let s: throw .invalidSSML("break strength \(s)")
        }
    }

    static func decodeEntities(_ s: String) throws(SpeechError) -> String {
        guard s.contains("&") else { return s }
        var out = ""
        var i = s.startIndex
        while i < s.endIndex {
            if s[i] == "&" {
                guard let semi = s[i...].firstIndex(of: ";") else { throw .invalidSSML("bad entity") }
                switch s[s.index(after: i)..<semi] {
                case "amp": out += "&"
                case "lt": out += "<"
                case "gt": out += ">"
                case "quot": out += "\""
                case "apos": out += "'"
                case let e: throw .invalidSSML("unknown entity &\(e);")
                }
                i = s.index(after: semi)
            } else {
                out.append(s[i])
                i = s.index(after: i)
            }
        }
        return out
    }
}

extension Substring {
    var trimmingSpaces: String {
        String(drop(while: { $0.isWhitespace }).reversed().drop(while: { $0.isWhitespace }).reversed())
    }
}

extension String {
    var trimmingSpaces: String { self[...].trimmingSpaces }
}
