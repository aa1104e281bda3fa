/// Reads field lines up to the blank line (RFC 9112 section 5), enforcing size and count
/// limits as bytes arrive so an endless header never gets buffered.
struct HTTPFieldSection: Sendable {
    var headers = HTTPHeaders()
    /// Field-line bytes so far, CRLFs included; carried over from the head into trailers.
    var byteCount = 0
    var fieldCount = 0
    /// False for trailers, which are validated and counted but dropped.
    var keepsFields = true

    /// Reads as many lines as are buffered; true once the blank line has been consumed.
    mutating func read(from buffer: inout HTTPInputBuffer, limits: HTTPParserLimits) throws(HTTPParseError) -> Bool {
        while true {
            let budget = limits.headerBytes - byteCount - 2
            let line: ArraySlice<UInt8>
            switch try buffer.readLine(maxLength: max(budget, 0)) {
            case .needMore:
                return false
            case .tooLong:
                throw HTTPParseError(
                    .headerSectionTooLarge, status: 431,
                    detail: "header section exceeds \(limits.headerBytes) bytes")
            case .line(let found):
                line = found
            }
            if line.isEmpty { return true }
            byteCount += line.count + 2
            fieldCount += 1
            guard fieldCount <= limits.headerCount else {
                throw HTTPParseError(
                    .tooManyHeaders, status: 431, detail: "more than \(limits.headerCount) header fields")
            }
            let (name, value) = try Self.parseFieldLine(line)
            if keepsFields { headers.add(name: name, value: value) }
        }
    }

    /// field-line = field-name ":" OWS field-value OWS
    static func parseFieldLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> (String, String) {
        guard let first = line.first else { throw .badRequest(.invalidHeaderName, "empty field line") }
        if HTTPSyntax.isWhitespace(first) {
            throw .badRequest(.obsoleteLineFolding, "field line starts with whitespace (obs-fold)")
        }
        guard let colon = line.firstIndex(of: HTTPSyntax.colon) else {
            throw .badRequest(.invalidHeaderName, "field line without colon: \(HTTPSyntax.excerpt(line))")
        }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty else { throw .badRequest(.invalidHeaderName, "empty field name") }
        for byte in name where !HTTPSyntax.isTokenChar(byte) {
            if let last = name.last, HTTPSyntax.isWhitespace(last) {
                throw .badRequest(
                    .whitespaceBeforeColon, "whitespace between field name and colon: \(HTTPSyntax.excerpt(name))")
            }
            throw .badRequest(.invalidHeaderName, "invalid field name: \(HTTPSyntax.excerpt(name))")
        }
        var value = line[(colon + 1)...]
        while let b = value.first, HTTPSyntax.isWhitespace(b) { value = value.dropFirst() }
        while let b = value.last, HTTPSyntax.isWhitespace(b) { value = value.dropLast() }
        for byte in value where !HTTPSyntax.isFieldValueChar(byte) {
            throw .badRequest(
                .invalidHeaderValue,
                "control character in value of \(HTTPSyntax.excerpt(name)): \(HTTPSyntax.excerpt(value))")
        }
        // Names are ASCII tokens; values may carry obs-text, which is decoded as UTF-8 with
        // invalid sequences replaced, since every field we act on is ASCII.
        return (String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }
}
