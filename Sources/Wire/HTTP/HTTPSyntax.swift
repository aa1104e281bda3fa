/// Character classes and small helpers from RFC 9110 section 5.6 and RFC 9112.
enum HTTPSyntax {
    static let cr: UInt8 = 0x0D
    static let lf: UInt8 = 0x0A
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let colon: UInt8 = 0x3A

    /// tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA
    static func isTokenChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// field-vchar / SP / HTAB, where obs-text (0x80-0xFF) is allowed; every other CTL is not.
    static func isFieldValueChar(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    /// A request-target byte: visible ASCII only, so no whitespace, CTL or raw UTF-8.
    static func isTargetChar(_ byte: UInt8) -> Bool {
        byte > 0x20 && byte < 0x7F
    }

    static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    static func lower(_ byte: UInt8) -> UInt8 {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z")) ? byte | 0x20 : byte
    }

    static func asciiLowercased(_ text: Substring) -> String {
        String(decoding: text.utf8.map(lower), as: UTF8.self)
    }

    static func trimmingWhitespace(_ text: Substring) -> Substring {
        var result = text
        while let first = result.utf8.first, isWhitespace(first) { result = result.dropFirst() }
        while let last = result.utf8.last, isWhitespace(last) { result = result.dropLast() }
        return result
    }

    /// Parses `HTTP/D.D`; nil if the bytes are not that shape at all.
    static func parseVersion(_ bytes: ArraySlice<UInt8>) -> HTTPVersion? {
        guard bytes.count == 8 else { return nil }
        let b = Array(bytes)
        guard b[0] == UInt8(ascii: "H"), b[1] == UInt8(ascii: "T"), b[2] == UInt8(ascii: "T"),
            b[3] == UInt8(ascii: "P"), b[4] == UInt8(ascii: "/"), b[6] == UInt8(ascii: "."),
            isDigit(b[5]), isDigit(b[7])
        else { return nil }
        return HTTPVersion(major: Int(b[5] - UInt8(ascii: "0")), minor: Int(b[7] - UInt8(ascii: "0")))
    }

    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return Int(byte - UInt8(ascii: "A") + 10)
        default: return nil
        }
    }

    /// Printable form of raw bytes for error details, cut short so errors stay small.
    static func excerpt(_ bytes: ArraySlice<UInt8>, limit: Int = 64) -> String {
        var out = ""
        for byte in bytes.prefix(limit) {
            if byte >= 0x20 && byte < 0x7F {
                out.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                out += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        if bytes.count > limit { out += "…" }
        return out
    }
}

extension HTTPSyntax {
    /// RFC 9112 section 9.3: `close` always wins; otherwise 1.1 persists and 1.0 needs `keep-alive`.
    static func persists(version: HTTPVersion, headers: HTTPHeaders) -> Bool {
        let connection = headers.tokens(for: "Connection")
        if connection.contains("close") { return false }
        if version.major > 1 || (version.major == 1 && version.minor >= 1) { return true }
        return connection.contains("keep-alive")
    }

    static func appendSanitized(_ text: String, into buffer: inout [UInt8], allowSpace: Bool) {
        for byte in text.utf8 {
            if byte == cr || byte == lf || byte == 0 || (!allowSpace && byte == space) {
                buffer.append(allowSpace ? space : UInt8(ascii: "_"))
            } else {
                buffer.append(byte)
            }
        }
    }

    static func appendFields(_ headers: HTTPHeaders, into buffer: inout [UInt8]) {
        for field in headers {
            appendSanitized(field.name, into: &buffer, allowSpace: false)
            buffer.append(colon)
            buffer.append(space)
            appendSanitized(field.value, into: &buffer, allowSpace: true)
            buffer.append(cr)
            buffer.append(lf)
        }
        buffer.append(cr)
        buffer.append(lf)
    }
}
