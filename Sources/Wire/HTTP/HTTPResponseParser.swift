/// A sans-I/O HTTP/1.1 response parser (RFC 9112) for our own client and tests.
///
/// ```
/// status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF
/// ```
///
/// Body length follows RFC 9112 section 6.3: none for HEAD, 1xx, 204 and 304; chunked;
/// Content-Length; otherwise until the connection closes, which the caller reports with
/// `finish()`. Set `requestMethod` before each response so HEAD and CONNECT are framed
/// right. Interim 1xx responses are reported as their own `.head` + `.end`; after 101,
/// or 2xx to CONNECT, the parser stops and `takeBufferedBytes()` returns the tunnel bytes.
///
/// `HTTPParseError.status` is the status a server would have answered; for a client it
/// only classifies the failure. Content-Length with Transfer-Encoding is rejected
/// rather than resolved in favour of Transfer-Encoding.
public struct HTTPResponseParser: Sendable {
    public let limits: HTTPParserLimits
    /// The method of the request this response answers.
    public var requestMethod: HTTPMethod = .GET

    private enum State: Sendable {
        case statusLine
        case fields(PendingHead)
        case body(HTTPBodyDecoder)
        case switched
        case closed
        case failed(HTTPParseError)
    }

    private struct PendingHead: Sendable {
        var version: HTTPVersion
        var status: Int
        var reason: String
        var section = HTTPFieldSection()
    }

    private var buffer = HTTPInputBuffer()
    private var state = State.statusLine

    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    public var bufferedByteCount: Int { buffer.count }

    /// True after a 101 or a successful CONNECT: the rest of the stream is not HTTP.
    public var hasSwitchedProtocols: Bool {
        if case .switched = state { return true }
        return false
    }

    public mutating func append(contentsOf bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(bytes)
    }

    public mutating func takeBufferedBytes() -> [UInt8] {
        buffer.takeAll()
    }

    /// The next event, or nil when more bytes are needed (or the protocol switched).
    public mutating func next() throws(HTTPParseError) -> HTTPResponseParseEvent? {
        do {
            return try step()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// Reports that the peer closed the connection: ends a read-until-close body,
    /// returns nil if no response was in progress, and throws `.truncated` otherwise.
    public mutating func finish() throws(HTTPParseError) -> HTTPResponseParseEvent? {
        switch state {
        case .failed(let error):
            throw error
        case .closed, .switched:
            return nil
        case .statusLine where buffer.isEmpty:
            state = .closed
            return nil
        case .body(let decoder) where decoder.readsUntilClose && buffer.isEmpty:
            state = .closed
            return .end
        default:
            let error = HTTPParseError(.truncated, status: 400, detail: "connection closed inside a response")
            state = .failed(error)
            throw error
        }
    }

    private mutating func step() throws(HTTPParseError) -> HTTPResponseParseEvent? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .switched, .closed:
                return nil
            case .statusLine:
                let line: ArraySlice<UInt8>
                switch try buffer.readLine(maxLength: limits.requestLine) {
                case .needMore: return nil
                case .tooLong:
                    throw HTTPParseError(
                        .requestLineTooLong, status: 400, detail: "status line exceeds \(limits.requestLine) bytes")
                case .line(let found): line = found
                }
                state = .fields(try Self.parseStatusLine(line))
            case .fields(var pending):
                state = .statusLine
                guard try pending.section.read(from: &buffer, limits: limits) else {
                    state = .fields(pending)
                    return nil
                }
                let head = HTTPResponseHead(
                    status: pending.status, reason: pending.reason, version: pending.version,
                    headers: pending.section.headers)
                if pending.status == 101 || (requestMethod == .CONNECT && pending.status / 100 == 2) {
                    state = .switched
                    return .head(head)
                }
                let framing = try framing(of: head)
                if case .length(let length) = framing, length > limits.maxBody {
                    throw HTTPParseError(
                        .bodyTooLarge, status: 413, detail: "Content-Length \(length) exceeds \(limits.maxBody) bytes")
                }
                state = .body(HTTPBodyDecoder(framing: framing, limit: limits.maxBody, head: pending.section))
                return .head(head)
            case .body(var decoder):
                switch try decoder.step(&buffer, limits: limits) {
                case .needMore:
                    state = .body(decoder)
                    return nil
                case .body(let bytes):
                    state = .body(decoder)
                    return .body(bytes)
                case .end:
                    state = .statusLine
                    return .end
                }
            }
        }
    }

    private func framing(of head: HTTPResponseHead) throws(HTTPParseError) -> HTTPBodyDecoder.Framing {
        if requestMethod == .HEAD || head.status / 100 == 1 || head.status == 204 || head.status == 304 {
            return .length(0)
        }
        let length = try HTTPBodyDecoder.contentLength(head.headers)
        guard let coding = try HTTPBodyDecoder.transferCoding(head.headers) else {
            return length.map { .length($0) } ?? .untilClose
        }
        if length != nil {
            throw .badRequest(.contentLengthWithTransferEncoding, "both Content-Length and Transfer-Encoding")
        }
        switch coding {
        case .chunked: return .chunked
        case .notChunked: return .untilClose
        }
    }

    private static func parseStatusLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> PendingHead {
        let bad = HTTPParseError.badRequest(.invalidStatusLine, "invalid status line: \(HTTPSyntax.excerpt(line))")
        guard let space = line.firstIndex(of: HTTPSyntax.space) else { throw bad }
        guard let version = HTTPSyntax.parseVersion(line[line.startIndex..<space]) else { throw bad }
        guard version.major == 1 else {
            throw HTTPParseError(.unsupportedVersion, status: 505, detail: "unsupported version \(version)")
        }
        let rest = line[(space + 1)...]
        guard rest.count >= 3 else { throw bad }
        let digits = rest.prefix(3)
        guard digits.allSatisfy(HTTPSyntax.isDigit) else { throw bad }
        let status = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
        guard status >= 100 else { throw bad }
        var reason = rest.dropFirst(3)
        if let first = reason.first {
            // Some servers omit the reason but keep or drop the space; both are accepted.
            guard first == HTTPSyntax.space else { throw bad }
            reason = reason.dropFirst()
        }
        guard reason.allSatisfy(HTTPSyntax.isFieldValueChar) else { throw bad }
        return PendingHead(version: version, status: status, reason: String(decoding: reason, as: UTF8.self))
    }
}
