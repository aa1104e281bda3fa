/// A strict JSON parser (RFC 8259) straight into `JSONValue`, without `JSONDecoder`.
///
/// Every Bearer request decodes two small JSON objects (JWS header and claims, RFC 7515 section 5.2);
/// through `JSONDecoder` that cost several times the RSA verification. Strict on purpose: invalid UTF-8,
/// control characters in strings, trailing bytes and duplicate member names are errors (RFC 7515
/// section 5.2 step 4 allows refusing duplicates, and refusing is the safe choice for tokens).
public enum JSONParser {
    /// Nesting deeper than this is refused, so input cannot exhaust the stack.
    public static let maxDepth = 64

    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONParseError) -> JSONValue in
            var reader = Reader(buffer: buffer)
            reader.skipWhitespace()
            let value = try reader.value(depth: 0)
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw JSONParseError(.trailingBytes, at: reader.index) }
            return value
        }
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSONValue { try parse(Array(text.utf8)) }

    private struct Reader {
        let buffer: UnsafeBufferPointer<UInt8>
        var index = 0

        init(buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

        var peek: UInt8? { index < buffer.count ? buffer[index] : nil }

        mutating func skipWhitespace() {
            while index < buffer.count {
                switch buffer[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func expect(_ byte: UInt8) throws(JSONParseError) {
            guard peek == byte else { throw JSONParseError(peek == nil ? .truncated : .unexpectedByte, at: index) }
            index += 1
        }

        mutating func value(depth: Int) throws(JSONParseError) -> JSONValue {
            guard let c = peek else { throw JSONParseError(.truncated, at: index) }
            switch c {
            case UInt8(ascii: "{"): return try object(depth: depth + 1)
            case UInt8(ascii: "["): return try array(depth: depth + 1)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw JSONParseError(.unexpectedByte, at: index)
            }
        }

        mutating func literal(_ word: StaticString) throws(JSONParseError) {
            let n = word.utf8CodeUnitCount
            guard buffer.count - index >= n else { throw JSONParseError(.truncated, at: index) }
            for i in 0..<n where buffer[index + i] != word.utf8Start[i] { throw JSONParseError(.unexpectedByte, at: index + i) }
            index += n
        }

        mutating func object(depth: Int) throws(JSONParseError) -> JSONValue {
            guard depth <= JSONParser.maxDepth else { throw JSONParseError(.tooDeep, at: index) }
            index += 1
            var members: [String: JSONValue] = [:]
            skipWhitespace()
            if peek == UInt8(ascii: "}") { index += 1; return .object(members) }
            while true {
                skipWhitespace()
                guard peek == UInt8(ascii: "\"") else { throw JSONParseError(peek == nil ? .truncated : .unexpectedByte, at: index) }
                let keyAt = index
                let key = try string()
                skipWhitespace()
                try expect(UInt8(ascii: ":"))
                skipWhitespace()
                let v = try value(depth: depth)
                guard members.updateValue(v, forKey: key) == nil else { throw JSONParseError(.duplicateKey, at: keyAt) }
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return .object(members)
                case nil: throw JSONParseError(.truncated, at: index)
                default: throw JSONParseError(.unexpectedByte, at: index)
                }
            }
        }

        mutating func array(depth: Int) throws(JSONParseError) -> JSONValue {
            guard depth <= JSONParser.maxDepth else { throw JSONParseError(.tooDeep, at: index) }
            index += 1
            var items: [JSONValue] = []
            skipWhitespace()
            if peek == UInt8(ascii: "]") { index += 1; return .array(items) }
            while true {
                skipWhitespace()
                items.append(try value(depth: depth))
                skipWhitespace()
                switch peek {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return .array(items)
                case nil: throw JSONParseError(.truncated, at: index)
                default: throw JSONParseError(.unexpectedByte, at: index)
                }
            }
        }

        /// A string starting at the opening quote; the common case without escapes is one validated slice.
        mutating func string() throws(JSONParseError) -> String {
            index += 1
            let start = index
            while index < buffer.count {
                let c = buffer[index]
                if c == UInt8(ascii: "\"") {
                    let s = try validated(UnsafeBufferPointer(rebasing: buffer[start..<index]), at: start)
                    index += 1
                    return s
                }
                if c == UInt8(ascii: "\\") { break }
                if c < 0x20 { throw JSONParseError(.controlCharacter, at: index) }
                index += 1
            }
            guard index < buffer.count else { throw JSONParseError(.truncated, at: index) }
            var out = Array(buffer[start..<index])
            while index < buffer.count {
                let c = buffer[index]
                switch c {
                case UInt8(ascii: "\""):
                    index += 1
                    return try out.withUnsafeBufferPointer { b throws(JSONParseError) in try validated(b, at: start) }
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let e = peek else { throw JSONParseError(.truncated, at: index) }
                    index += 1
                    switch e {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"): appendUTF8(try unicodeEscape(), to: &out)
                    default: throw JSONParseError(.badEscape, at: index - 1)
                    }
                default:
                    if c < 0x20 { throw JSONParseError(.controlCharacter, at: index) }
                    out.append(c)
                    index += 1
                }
            }
            throw JSONParseError(.truncated, at: index)
        }

        func validated(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) throws(JSONParseError) -> String {
            guard let s = String(validating: bytes, as: UTF8.self) else { throw JSONParseError(.invalidUTF8, at: offset) }
            return s
        }

        /// `XXXX` after `\u`, joining a UTF-16 surrogate pair (RFC 8259 section 7).
        mutating func unicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
            let high = try hex4()
            if (0xD800...0xDBFF).contains(high) {
                guard buffer.count - index >= 6, buffer[index] == UInt8(ascii: "\\"), buffer[index + 1] == UInt8(ascii: "u") else {
                    throw JSONParseError(.badEscape, at: index)
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw JSONParseError(.badEscape, at: index - 4) }
                let scalar = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                guard let u = Unicode.Scalar(scalar) else { throw JSONParseError(.badEscape, at: index - 4) }
                return u
            }
            guard let u = Unicode.Scalar(high) else { throw JSONParseError(.badEscape, at: index - 4) }
            return u
        }

        mutating func hex4() throws(JSONParseError) -> UInt32 {
            guard buffer.count - index >= 4 else { throw JSONParseError(.truncated, at: index) }
            var v: UInt32 = 0
            for _ in 0..<4 {
                let c = buffer[index]
                let d: UInt8
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: throw JSONParseError(.badEscape, at: index)
                }
                v = v << 4 | UInt32(d)
                index += 1
            }
            return v
        }

        func appendUTF8(_ u: Unicode.Scalar, to out: inout [UInt8]) {
            UTF8.encode(u) { out.append($0) }
        }

        /// `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`; short integers skip the float parser.
        mutating func number() throws(JSONParseError) -> Double {
            let start = index
            var negative = false
            if peek == UInt8(ascii: "-") { negative = true; index += 1 }
            let intStart = index
            var integer: Int64 = 0
            while let c = peek, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") {
                if index - intStart < 18 { integer = integer * 10 + Int64(c - UInt8(ascii: "0")) }
                index += 1
            }
            let intDigits = index - intStart
            guard intDigits > 0 else { throw JSONParseError(peek == nil ? .truncated : .badNumber, at: index) }
            guard !(intDigits > 1 && buffer[intStart] == UInt8(ascii: "0")) else { throw JSONParseError(.badNumber, at: intStart) }
            var simple = intDigits < 18
            if peek == UInt8(ascii: ".") {
                simple = false
                index += 1
                try digits()
            }
            if peek == UInt8(ascii: "e") || peek == UInt8(ascii: "E") {
                simple = false
                index += 1
                if peek == UInt8(ascii: "+") || peek == UInt8(ascii: "-") { index += 1 }
                try digits()
            }
            if simple { return negative ? -Double(integer) : Double(integer) }
            let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
            guard let d = Double(text), d.isFinite else { throw JSONParseError(.badNumber, at: start) }
            return d
        }

        mutating func digits() throws(JSONParseError) {
            let s = index
            while let c = peek, c >= UInt8(ascii: "0"), c <= UInt8(ascii: "9") { index += 1 }
            guard index > s else { throw JSONParseError(peek == nil ? .truncated : .badNumber, at: index) }
        }
    }
}

/// Why `JSONParser` refused its input, and the byte offset where it noticed.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Reason: String, Sendable {
        case truncated = "input ends inside a value"
        case unexpectedByte = "unexpected byte"
        case trailingBytes = "bytes after the value"
        case controlCharacter = "control character in a string"
        case badEscape = "invalid escape"
        case invalidUTF8 = "invalid UTF-8"
        case badNumber = "invalid number"
        case duplicateKey = "duplicate member name"
        case tooDeep = "nested too deeply"
    }

    public var reason: Reason
    public var offset: Int

    public init(_ reason: Reason, at offset: Int) {
        self.reason = reason
        self.offset = offset
    }

    public var description: String { "\(reason.rawValue) at byte \(offset)" }
}
