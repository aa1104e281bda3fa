/// Character classes and small scanners shared by the SIP parsers (RFC 3261 §25.1).
enum SIPSyntax {
    static let cr: UInt8 = 13, lf: UInt8 = 10, space: UInt8 = 32, tab: UInt8 = 9

    /// `token` = 1*(alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~")
    static func isTokenChar(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "-.!%*_+`'~".utf8.contains(c)
        }
    }

    static func isToken(_ s: some StringProtocol) -> Bool { !s.isEmpty && s.utf8.allSatisfy(isTokenChar) }

    static func isWhitespace(_ c: Character) -> Bool { c == " " || c == "\t" || c == "\r" || c == "\n" }

    /// Strips SP, HTAB, CR and LF from both ends, scalar by scalar: by `Character` a space followed by a
    /// combining mark is one grapheme that is not whitespace, so its space would survive the trim and a
    /// round trip through the serializer would add one more each time.
    static func trim(_ s: Substring) -> Substring {
        let scalars = s.unicodeScalars
        var start = scalars.startIndex, end = scalars.endIndex
        while start < end, isWhitespace(scalars[start]) { start = scalars.index(after: start) }
        while end > start, isWhitespace(scalars[scalars.index(before: end)]) { end = scalars.index(before: end) }
        return Substring(scalars[start..<end])
    }

    static func isWhitespace(_ u: Unicode.Scalar) -> Bool { u == " " || u == "\t" || u == "\r" || u == "\n" }

    static func trim(_ s: String) -> String { String(trim(Substring(s))) }

    /// Splits a header value on commas outside quoted strings and angle brackets.
    static func splitList(_ value: Substring) throws(SIPParseError) -> [Substring] {
        var parts: [Substring] = []
        var inQuotes = false, escaped = false, inAngle = false
        var start = value.startIndex
        var i = value.startIndex
        while i < value.endIndex {
            let c = value[i]
            if inQuotes {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inQuotes = false }
            } else if c == "\"" {
                inQuotes = true
            } else if c == "<" {
                inAngle = true
            } else if c == ">" {
                inAngle = false
            } else if c == ",", !inAngle {
                parts.append(trim(value[start..<i]))
                start = value.index(after: i)
            }
            i = value.index(after: i)
        }
        if inQuotes { throw .bad(.invalidHeader, "unterminated quoted string") }
        parts.append(trim(value[start...]))
        return parts
    }

    /// Index of the first `target` outside quoted strings, or nil.
    static func firstUnquoted(_ target: Character, in s: Substring) -> Substring.Index? {
        var inQuotes = false, escaped = false
        var i = s.startIndex
        while i < s.endIndex {
            let c = s[i]
            if inQuotes {
                if escaped { escaped = false } else if c == "\\" { escaped = true } else if c == "\"" { inQuotes = false }
            } else if c == "\"" {
                inQuotes = true
            } else if c == target {
                return i
            }
            i = s.index(after: i)
        }
        return nil
    }

    /// Decodes `%HH` escapes; nil when an escape is malformed.
    static func unescape(_ s: Substring) -> String? {
        guard s.contains("%") else { return String(s) }
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        var it = Array(s.utf8)[...]
        while let c = it.popFirst() {
            if c == UInt8(ascii: "%") {
                guard let h = it.popFirst(), let l = it.popFirst(), let hv = hexValue(h), let lv = hexValue(l) else { return nil }
                out.append(hv << 4 | lv)
            } else {
                out.append(c)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Percent-encodes every byte not in `allowed`.
    static func escape(_ s: String, allowed: (UInt8) -> Bool) -> String {
        guard !s.utf8.allSatisfy(allowed) else { return s }
        var out = ""
        for b in s.utf8 {
            if allowed(b) {
                out.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                out += "%"
                out += String(b >> 4, radix: 16, uppercase: true)
                out += String(b & 15, radix: 16, uppercase: true)
            }
        }
        return out
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    static func isAlphaNum(_ c: UInt8) -> Bool {
        (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z") || c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")
    }

    /// `unreserved` = alphanum / mark
    static func isUnreserved(_ c: UInt8) -> Bool { isAlphaNum(c) || "-_.!~*'()".utf8.contains(c) }

    /// Characters a `user` may carry unescaped (unreserved / user-unreserved).
    static func isUserChar(_ c: UInt8) -> Bool { isUnreserved(c) || "&=+$,;?/".utf8.contains(c) }

    static func isPasswordChar(_ c: UInt8) -> Bool { isUnreserved(c) || "&=+$,".utf8.contains(c) }

    /// `paramchar` = param-unreserved / unreserved / escaped
    static func isParamChar(_ c: UInt8) -> Bool { isUnreserved(c) || "[]/:&+$".utf8.contains(c) }

    /// `hnv-unreserved` / unreserved
    static func isHeaderChar(_ c: UInt8) -> Bool { isUnreserved(c) || "[]/?:+$".utf8.contains(c) }

    /// Host names, IPv4 and bracketed IPv6 references.
    static func isValidHost(_ host: Substring) -> Bool {
        guard !host.isEmpty else { return false }
        if host.first == "[" {
            guard host.last == "]", host.count > 2 else { return false }
            return host.dropFirst().dropLast().utf8.allSatisfy { hexValue($0) != nil || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }
        }
        return host.utf8.allSatisfy { isAlphaNum($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }
    }

    /// Parses 1*DIGIT into a value no larger than `max`; leading zeros are fine.
    static func number(_ s: Substring, max: UInt64) -> UInt64? {
        guard !s.isEmpty, s.utf8.count <= 40 else { return nil }
        var v: UInt64 = 0
        for c in s.utf8 {
            guard c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(c - UInt8(ascii: "0")))
            if o1 || o2 || a > max { return nil }
            v = a
        }
        return v
    }

    /// Reads a quoted string starting at `s.first == "\""`, returning the unescaped text and the rest.
    static func quotedString(_ s: Substring) throws(SIPParseError) -> (String, Substring) {
        var out = ""
        var i = s.index(after: s.startIndex)
        var escaped = false
        while i < s.endIndex {
            let c = s[i]
            if escaped {
                out.append(c)
                escaped = false
            } else if c == "\\" {
                escaped = true
            } else if c == "\"" {
                return (out, s[s.index(after: i)...])
            } else {
                out.append(c)
            }
            i = s.index(after: i)
        }
        throw .bad(.invalidAddress, "unterminated quoted string")
    }

    /// Quotes `text`, escaping `"` and `\`.
    static func quote(_ text: String) -> String {
        var out = "\""
        for c in text {
            if c == "\"" || c == "\\" { out.append("\\") }
            out.append(c)
        }
        out.append("\"")
        return out
    }
}
