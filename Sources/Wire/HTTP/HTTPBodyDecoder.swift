/// Decodes a message body once its framing is known (RFC 9112 sections 6 and 7):
/// a fixed length, chunked (extensions ignored, trailers checked then dropped), or
/// everything until the connection closes (responses only).
struct HTTPBodyDecoder: Sendable {
    enum Framing: Hashable, Sendable {
        case length(Int)
        case chunked
        case untilClose
    }

    enum Step {
        case body([UInt8])
        case end
        case needMore
    }

    private enum State: Sendable {
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private var state: State
    /// Trailers count against the header limits together with the head's fields.
    private var trailers: HTTPFieldSection
    private(set) var received = 0
    var limit: Int

    init(framing: Framing, limit: Int, head: HTTPFieldSection) {
        switch framing {
        case .length(let n): state = .fixed(remaining: n)
        case .chunked: state = .chunkSize
        case .untilClose: state = .untilClose
        }
        self.limit = limit
        trailers = HTTPFieldSection(byteCount: head.byteCount, fieldCount: head.fieldCount, keepsFields: false)
    }

    var readsUntilClose: Bool {
        if case .untilClose = state { return true }
        return false
    }

    private func tooLarge() -> HTTPParseError {
        HTTPParseError(.bodyTooLarge, status: 413, detail: "body exceeds \(limit) bytes")
    }

    mutating func step(_ buffer: inout HTTPInputBuffer, limits: HTTPParserLimits) throws(HTTPParseError) -> Step {
        while true {
            switch state {
            case .done:
                return .end
            case .fixed(let remaining):
                guard received + remaining <= limit else { throw tooLarge() }
                if remaining == 0 {
                    state = .done
                    return .end
                }
                if buffer.isEmpty { return .needMore }
                let chunk = buffer.take(upTo: remaining)
                received += chunk.count
                state = .fixed(remaining: remaining - chunk.count)
                return .body(chunk)
            case .untilClose:
                if buffer.isEmpty { return .needMore }
                // Deliver up to the limit first so the outcome does not depend on read sizes.
                guard received < limit else { throw tooLarge() }
                let chunk = buffer.take(upTo: limit - received)
                received += chunk.count
                return .body(chunk)
            case .chunkSize:
                let line: ArraySlice<UInt8>
                switch try buffer.readLine(maxLength: limits.chunkLine) {
                case .needMore: return .needMore
                case .tooLong:
                    throw .badRequest(.invalidChunk, "chunk size line longer than \(limits.chunkLine) bytes")
                case .line(let found): line = found
                }
                let size = try Self.parseChunkSize(line)
                guard let size, received + size <= limit else { throw tooLarge() }
                state = size == 0 ? .trailers : .chunkData(remaining: size)
            case .chunkData(let remaining):
                if buffer.isEmpty { return .needMore }
                let chunk = buffer.take(upTo: remaining)
                received += chunk.count
                state = chunk.count == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - chunk.count)
                return .body(chunk)
            case .chunkDataEnd:
                switch buffer.takeCRLF() {
                case nil: return .needMore
                case false?: throw .badRequest(.invalidChunk, "chunk data not followed by CRLF")
                case true?: state = .chunkSize
                }
            case .trailers:
                guard try trailers.read(from: &buffer, limits: limits) else { return .needMore }
                state = .done
            }
        }
    }

    /// chunk-size [ chunk-ext ]: hex digits, then nothing or BWS ";" extensions.
    /// Returns nil when the size does not fit in an Int (too large by any limit).
    static func parseChunkSize(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int? {
        var size = 0
        var overflow = false
        var index = line.startIndex
        while index < line.endIndex, let digit = HTTPSyntax.hexValue(line[index]) {
            if !overflow {
                let (shifted, o1) = size.multipliedReportingOverflow(by: 16)
                let (sum, o2) = shifted.addingReportingOverflow(digit)
                overflow = o1 || o2
                size = sum
            }
            index += 1
        }
        guard index > line.startIndex else {
            throw .badRequest(.invalidChunk, "invalid chunk size: \(HTTPSyntax.excerpt(line))")
        }
        var rest = line[index...]
        while let b = rest.first, HTTPSyntax.isWhitespace(b) { rest = rest.dropFirst() }
        if let first = rest.first {
            guard first == UInt8(ascii: ";"), rest.allSatisfy(HTTPSyntax.isFieldValueChar) else {
                throw .badRequest(.invalidChunk, "invalid chunk size: \(HTTPSyntax.excerpt(line))")
            }
        } else if rest.startIndex != index {
            throw .badRequest(.invalidChunk, "whitespace after chunk size without extension")
        }
        return overflow ? nil : size
    }
}

extension HTTPBodyDecoder {
    /// Content-Length values, which may repeat or be a list only if every element is equal
    /// (RFC 9110 section 8.6). nil when absent; Int.max when too large to represent.
    static func contentLength(_ headers: HTTPHeaders) throws(HTTPParseError) -> Int? {
        var result: Int?
        for value in headers.values(for: "Content-Length") {
            for element in value.utf8.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false) {
                var digits = element[...]
                while let b = digits.first, HTTPSyntax.isWhitespace(b) { digits = digits.dropFirst() }
                while let b = digits.last, HTTPSyntax.isWhitespace(b) { digits = digits.dropLast() }
                guard !digits.isEmpty, digits.allSatisfy(HTTPSyntax.isDigit) else {
                    throw .badRequest(.invalidContentLength, "invalid Content-Length: \(value)")
                }
                var length = 0
                for digit in digits {
                    let (shifted, o1) = length.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = shifted.addingReportingOverflow(Int(digit - UInt8(ascii: "0")))
                    if o1 || o2 {
                        length = Int.max
                        break
                    }
                    length = sum
                }
                if let result, result != length {
                    throw .badRequest(.conflictingContentLength, "differing Content-Length values")
                }
                result = length
            }
        }
        return result
    }

    enum TransferCoding {
        case chunked
        /// The final coding is not chunked: the length is only known at close.
        case notChunked
    }

    /// The Transfer-Encoding list, nil when absent (RFC 9112 section 6.1).
    ///
    /// Only `chunked` is implemented, so `gzip, chunked` is 501 (a coding we do not
    /// understand) and `chunked, chunked` is 400 (chunked applied twice).
    static func transferCoding(_ headers: HTTPHeaders) throws(HTTPParseError) -> TransferCoding? {
        guard headers.contains(name: "Transfer-Encoding") else { return nil }
        let codings = headers.tokens(for: "Transfer-Encoding")
        guard let last = codings.last else {
            throw .badRequest(.invalidTransferEncoding, "empty Transfer-Encoding")
        }
        guard last == "chunked" else { return .notChunked }
        let others = codings.dropLast()
        if others.contains("chunked") {
            throw .badRequest(.invalidTransferEncoding, "chunked applied more than once")
        }
        if let other = others.first {
            throw HTTPParseError(
                .unsupportedTransferEncoding, status: 501, detail: "unsupported transfer coding: \(other)")
        }
        return .chunked
    }
}
