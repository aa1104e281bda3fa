/// A custom layout for a composed archive or broadcast, as the Video API takes it (`layout: {type: "custom",
/// stylesheet}`): CSS whose rules place `stream` elements — one per stream shown, in the order they were
/// published, each carrying its layout classes — on the canvas. Pure: parsed once, then asked where each
/// stream goes.
///
/// The CSS understood, a subset of what a browser would do with the same elements:
/// - selectors: `stream`, with any `.class`es and one of `:first-child`, `:last-child`, `:nth-child(n)`;
///   comma-separated lists; a rule with any other selector is dropped, as CSS drops a rule it cannot read;
///   the most specific rule wins a property (classes and position count one each), later rules ties;
/// - `position: absolute` (or `fixed`) with `top`/`left` (or `bottom`/`right`), else the elements flow: with
///   `float: left|right` side by side, wrapping to the next line when they do not fit, otherwise each on a line
///   of its own;
/// - `width`, `height` in `%` of the canvas or `px` (a missing one follows the picture's aspect ratio; both
///   missing: the picture's own size); `display: none` hides; `z-index` orders the drawing; `object-fit:
///   cover` fills the box, cropping, where the default (`contain`) fits the picture inside it;
/// - other properties, `!important`, comments and at-rules are ignored.
public struct LayoutStylesheet: Sendable, Equatable {
    public static let maxBytes = 10_000
    public static let maxRules = 100

    struct Selector: Sendable, Equatable {
        enum Position: Sendable, Equatable { case any, first, last, nth(Int) }
        var classes: [String]
        var position: Position

        var specificity: Int { classes.count + (position == .any ? 0 : 1) }

        func matches(_ classes: Set<String>, index: Int, count: Int) -> Bool {
            guard self.classes.allSatisfy(classes.contains) else { return false }
            switch position {
            case .any: return true
            case .first: return index == 0
            case .last: return index == count - 1
            case .nth(let n): return index == n - 1
            }
        }
    }

    struct Rule: Sendable, Equatable {
        var selectors: [Selector]
        /// Property (lowercased) → value, in the order written (a later one overrides).
        var declarations: [(String, String)]

        static func == (a: Rule, b: Rule) -> Bool {
            a.selectors == b.selectors && a.declarations.elementsEqual(b.declarations) { $0 == $1 }
        }
    }

    private(set) var rules: [Rule] = []

    /// A stream to place: its layout classes and its picture's size.
    public struct Element: Sendable {
        public var classes: Set<String>
        public var width: Int
        public var height: Int

        public init(classes: Set<String>, width: Int, height: Int) {
            self.classes = classes
            self.width = width
            self.height = height
        }
    }

    /// Where an element goes, in canvas pixels (possibly beyond the canvas: the drawing clips), and how.
    public struct Placement: Sendable, Equatable {
        public var index: Int
        public var x, y, width, height: Int
        public var cover: Bool
        public var z: Int
    }

    /// Nil for a stylesheet longer than `maxBytes` or with no rule for `stream` elements.
    public init?(_ text: String) {
        guard text.utf8.count <= Self.maxBytes else { return nil }
        var rest = Substring(Self.withoutComments(text))
        while let open = rest.firstIndex(of: "{"), rules.count < Self.maxRules {
            let prelude = rest[..<open].trimmingWhitespace()
            // The block, to its matching brace (an at-rule's may nest).
            var depth = 0
            var close = rest.endIndex
            for i in rest[open...].indices {
                if rest[i] == "{" { depth += 1 } else if rest[i] == "}" {
                    depth -= 1
                    if depth == 0 {
                        close = i
                        break
                    }
                }
            }
            let body = rest[rest.index(after: open)..<close]
            rest = close < rest.endIndex ? rest[rest.index(after: close)...] : ""
            guard !prelude.hasPrefix("@"), let selectors = Self.selectors(prelude) else { continue }
            rules.append(Rule(selectors: selectors, declarations: Self.declarations(body)))
        }
        guard !rules.isEmpty else { return nil }
    }

    /// Where each element goes, in drawing order (by `z-index`, then as given); hidden ones are left out.
    public func place(_ elements: [Element], width canvasWidth: Int, height canvasHeight: Int) -> [Placement] {
        var placements: [Placement] = []
        // The flow: the current line's top and height, and how far its left and right floats reach.
        var lineTop = 0, lineHeight = 0, leftEdge = 0, rightEdge = canvasWidth
        for (index, element) in elements.enumerated() {
            let style = computed(element.classes, index: index, count: elements.count)
            guard style["display"] != "none" else { continue }
            var w = style["width"].flatMap { Self.length($0, of: canvasWidth) }
            var h = style["height"].flatMap { Self.length($0, of: canvasHeight) }
            let ratio = Double(max(element.width, 1)) / Double(max(element.height, 1))
            switch (w, h) {
            case (nil, nil): (w, h) = (element.width, element.height)
            case (let w?, nil): h = Int(Double(w) / ratio)
            case (nil, let h?): w = Int(Double(h) * ratio)
            default: break
            }
            guard let width = w, let height = h, width > 0, height > 0 else { continue }
            var x = 0, y = 0
            switch style["position"] {
            case "absolute"?, "fixed"?:
                if let left = style["left"].flatMap({ Self.length($0, of: canvasWidth) }) {
                    x = left
                } else if let right = style["right"].flatMap({ Self.length($0, of: canvasWidth) }) {
                    x = canvasWidth - right - width
                }
                if let top = style["top"].flatMap({ Self.length($0, of: canvasHeight) }) {
                    y = top
                } else if let bottom = style["bottom"].flatMap({ Self.length($0, of: canvasHeight) }) {
                    y = canvasHeight - bottom - height
                }
            default:
                let float = style["float"]
                if float == "left" || float == "right" {
                    if rightEdge - leftEdge < width, leftEdge > 0 || rightEdge < canvasWidth {
                        // Does not fit beside what is on this line: the next one.
                        lineTop += lineHeight
                        (lineHeight, leftEdge, rightEdge) = (0, 0, canvasWidth)
                    }
                    if float == "left" {
                        x = leftEdge
                        leftEdge += width
                    } else {
                        x = rightEdge - width
                        rightEdge -= width
                    }
                    y = lineTop
                    lineHeight = max(lineHeight, height)
                } else {
                    // A block: below everything so far, on a line of its own.
                    y = lineTop + lineHeight
                    lineTop = y + height
                    (lineHeight, leftEdge, rightEdge) = (0, 0, canvasWidth)
                }
            }
            let z = style["z-index"].flatMap { Int($0) } ?? 0
            placements.append(Placement(index: index, x: x, y: y, width: width, height: height, cover: style["object-fit"] == "cover", z: z))
        }
        return placements.enumerated().sorted { ($0.element.z, $0.offset) < ($1.element.z, $1.offset) }.map(\.element)
    }

    /// The properties that apply to an element: every matching rule's, the more specific (then the later) winning.
    func computed(_ classes: Set<String>, index: Int, count: Int) -> [String: String] {
        var matching: [(specificity: Int, order: Int, rule: Rule)] = []
        for (order, rule) in rules.enumerated() {
            let best = rule.selectors.filter { $0.matches(classes, index: index, count: count) }.map(\.specificity).max()
            if let best { matching.append((best, order, rule)) }
        }
        var style: [String: String] = [:]
        for (_, _, rule) in matching.sorted(by: { ($0.specificity, $0.order) < ($1.specificity, $1.order) }) {
            for (property, value) in rule.declarations { style[property] = value }
        }
        return style
    }

    /// `N%` of `whole`, `Npx`, or a bare `0`; nil for anything else.
    static func length(_ value: String, of whole: Int) -> Int? {
        if value.hasSuffix("%"), let n = Double(value.dropLast()), n.isFinite, abs(n) <= 10_000 { return Int((n * Double(whole) / 100).rounded()) }
        if value.hasSuffix("px"), let n = Double(value.dropLast(2)), n.isFinite, abs(n) <= 100_000 { return Int(n.rounded()) }
        return value == "0" ? 0 : nil
    }

    /// The text without its `/* … */` comments (an unclosed one runs to the end).
    static func withoutComments(_ text: String) -> String {
        var out: [UInt8] = []
        let bytes = Array(text.utf8)
        var i = 0, inComment = false
        while i < bytes.count {
            let pair = i + 1 < bytes.count ? (bytes[i], bytes[i + 1]) : (bytes[i], 0)
            if !inComment, pair == (UInt8(ascii: "/"), UInt8(ascii: "*")) {
                inComment = true
                i += 2
            } else if inComment, pair == (UInt8(ascii: "*"), UInt8(ascii: "/")) {
                inComment = false
                i += 2
            } else {
                if !inComment { out.append(bytes[i]) }
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A selector list, or nil when any of it is not `stream` with classes and a position.
    static func selectors(_ prelude: Substring) -> [Selector]? {
        var list: [Selector] = []
        for part in prelude.split(separator: ",", omittingEmptySubsequences: false) {
            let text = part.trimmingWhitespace().lowercased()
            guard text.hasPrefix("stream") else { return nil }
            var rest = Substring(text.dropFirst(6))
            var selector = Selector(classes: [], position: .any)
            while let first = rest.first {
                if first == "." {
                    let name = rest.dropFirst().prefix { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" }
                    guard !name.isEmpty else { return nil }
                    selector.classes.append(String(name))
                    rest = rest.dropFirst(1 + name.count)
                } else if first == ":", selector.position == .any {
                    if rest.hasPrefix(":first-child") {
                        selector.position = .first
                        rest = rest.dropFirst(12)
                    } else if rest.hasPrefix(":last-child") {
                        selector.position = .last
                        rest = rest.dropFirst(11)
                    } else if rest.hasPrefix(":nth-child("), let close = rest.firstIndex(of: ")"),
                              let n = Int(rest[rest.index(rest.startIndex, offsetBy: 11)..<close].trimmingWhitespace()), (1...1_000).contains(n) {
                        selector.position = .nth(n)
                        rest = rest[rest.index(after: close)...]
                    } else {
                        return nil
                    }
                } else {
                    return nil
                }
            }
            list.append(selector)
        }
        return list
    }

    /// `property: value` pairs of a block; names lowercased, values trimmed and lowercased, `!important` dropped.
    static func declarations(_ body: Substring) -> [(String, String)] {
        body.split(separator: ";").compactMap { declaration in
            guard let colon = declaration.firstIndex(of: ":") else { return nil }
            let name = declaration[..<colon].trimmingWhitespace().lowercased()
            var value = declaration[declaration.index(after: colon)...].trimmingWhitespace().lowercased()
            if value.hasSuffix("!important") { value = String(Substring(value.dropLast(10)).trimmingWhitespace()) }
            guard !name.isEmpty, !value.isEmpty else { return nil }
            return (name, value)
        }
    }
}

extension Substring {
    fileprivate func trimmingWhitespace() -> Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\u{0C}" }
        guard let start = firstIndex(where: { !isSpace($0) }), let end = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[start...end]
    }
}
