/// A sans-I/O HTTP/1.1 request parser (RFC 9112).
///
/// Feed bytes with `append`, then call `next()` until it returns nil (need more data).
/// Each request yields `.head`, zero or more `.body`, then `.end`; pipelined requests
/// follow in order from the same buffer.
///
/// ```
/// request-line = method SP request-target SP HTTP-version CRLF
/// *( field-line CRLF )
/// CRLF
/// [ message-body ]
/// ```
///
/// Strictness, chosen to avoid framing disagreements with proxies:
/// - lines must end in CRLF; a bare LF is 400;
/// - exactly one SP between request-line parts; HTTP/1.1 needs exactly one Host (400);
/// - obs-fold, whitespace before the colon, non-token names and CTLs in values are 400;
/// - Content-Length with Transfer-Encoding, differing lengths, or Transfer-Encoding in
///   HTTP/1.0 are 400; a final coding other than chunked is 400, other codings before
///   chunked are 501;
/// - empty lines before a request line are skipped (RFC 9112 section 2.2).
///
/// After an error the parser stays failed and rethrows it.
/// After an accepted Upgrade, call `takeBufferedBytes()` instead of `next()`.
public struct HTTPRequestParser: Sendable {
    public let limits: HTTPParserLimits

    private enum State: Sendable {
        case requestLine
        case fields(PendingHead)
        case body(HTTPBodyDecoder)
        case failed(HTTPParseError)
    }

    private struct PendingHead: Sendable {
        var method: HTTPMethod
        var target: String
        var version: HTTPVersion
        var section = HTTPFieldSection()
    }

    private var buffer = HTTPInputBuffer()
    private var state = State.requestLine

    public init(limits: HTTPParserLimits = HTTPParserLimits()) {
        self.limits = limits
    }

    /// Bytes received but not yet parsed, so a server can stop reading while a
    /// pipelined backlog is large.
    public var bufferedByteCount: Int { buffer.count }

    public mutating func append(contentsOf bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(bytes)
    }

    /// Changes the body limit of the current request; call after `.head`.
    ///
    /// Lowering it below a declared Content-Length, or below what a chunked body has
    /// already delivered, makes the next `next()` throw 413.
    public mutating func setBodyLimit(_ limit: Int) {
        if case .body(var decoder) = state {
            decoder.limit = limit
            state = .body(decoder)
        }
    }

    /// Removes and returns every unparsed byte, for handing a connection to another
    /// protocol (WebSocket) after `.end` of an upgrade request.
    public mutating func takeBufferedBytes() -> [UInt8] {
        buffer.takeAll()
    }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() throws(HTTPParseError) -> HTTPParseEvent? {
        do {
            return try step()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    private mutating func step() throws(HTTPParseError) -> HTTPParseEvent? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .requestLine:
                let line: ArraySlice<UInt8>
                switch try buffer.readLine(maxLength: limits.requestLine) {
                case .needMore: return nil
                case .tooLong:
                    throw HTTPParseError(
                        .requestLineTooLong, status: 414,
                        detail: "request line exceeds \(limits.requestLine) bytes")
                case .line(let found): line = found
                }
                if line.isEmpty { continue }
                state = .fields(try Self.parseRequestLine(line))
            case .fields(var pending):
                // Move the pending head out so adding fields does not copy it.
                state = .requestLine
                guard try pending.section.read(from: &buffer, limits: limits) else {
                    state = .fields(pending)
                    return nil
                }
                let head = HTTPRequestHead(
                    method: pending.method, target: pending.target, version: pending.version,
                    headers: pending.section.headers)
                let framing = try Self.framing(of: head)
                if case .length(let length) = framing, length > limits.maxBody {
                    throw HTTPParseError(
                        .bodyTooLarge, status: 413,
                        detail: "Content-Length \(length) exceeds \(limits.maxBody) bytes")
                }
                state = .body(HTTPBodyDecoder(framing: framing, limit: limits.maxBody, head: pending.section))
                return .head(head)
            case .body(var decoder):
                let result = try decoder.step(&buffer, limits: limits)
                switch result {
                case .needMore:
                    state = .body(decoder)
                    return nil
                case .body(let bytes):
                    state = .body(decoder)
                    return .body(bytes)
                case .end:
                    state = .requestLine
                    return .end
                }
            }
        }
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> PendingHead {
        guard let firstSpace = line.firstIndex(of: HTTPSyntax.space) else {
            throw .badRequest(.invalidRequestLine, "request line without spaces: \(HTTPSyntax.excerpt(line))")
        }
        let method = line[line.startIndex..<firstSpace]
        guard !method.isEmpty, method.allSatisfy(HTTPSyntax.isTokenChar) else {
            throw .badRequest(.invalidMethod, "invalid method: \(HTTPSyntax.excerpt(method))")
        }
        let afterMethod = line[(firstSpace + 1)...]
        guard let secondSpace = afterMethod.firstIndex(of: HTTPSyntax.space) else {
            throw .badRequest(.invalidRequestLine, "request line without version: \(HTTPSyntax.excerpt(line))")
        }
        let target = afterMethod[afterMethod.startIndex..<secondSpace]
        guard !target.isEmpty, target.allSatisfy(HTTPSyntax.isTargetChar) else {
            throw .badRequest(.invalidTarget, "invalid request target: \(HTTPSyntax.excerpt(target))")
        }
        let versionBytes = line[(secondSpace + 1)...]
        guard let version = HTTPSyntax.parseVersion(versionBytes) else {
            throw .badRequest(.invalidVersion, "invalid HTTP version: \(HTTPSyntax.excerpt(versionBytes))")
        }
        guard version == .http1_1 || version == .http1_0 else {
            throw HTTPParseError(.unsupportedVersion, status: 505, detail: "unsupported version \(version)")
        }
        return PendingHead(
            method: HTTPMethod(String(decoding: method, as: UTF8.self)),
            target: String(decoding: target, as: UTF8.self),
            version: version)
    }

    /// Body length of a request (RFC 9112 section 6.3) after the Host checks of section 3.2.
    private static func framing(of head: HTTPRequestHead) throws(HTTPParseError) -> HTTPBodyDecoder.Framing {
        let hosts = head.headers.values(for: "Host")
        if hosts.count > 1 { throw .badRequest(.multipleHosts, "more than one Host field") }
        if hosts.isEmpty && head.version == .http1_1 {
            throw .badRequest(.missingHost, "HTTP/1.1 request without Host")
        }
        let length = try HTTPBodyDecoder.contentLength(head.headers)
        guard let coding = try HTTPBodyDecoder.transferCoding(head.headers) else {
            return .length(length ?? 0)
        }
        if length != nil {
            throw .badRequest(.contentLengthWithTransferEncoding, "both Content-Length and Transfer-Encoding")
        }
        if head.version == .http1_0 {
            throw .badRequest(.invalidTransferEncoding, "Transfer-Encoding in an HTTP/1.0 request")
        }
        switch coding {
        case .chunked:
            return .chunked
        case .notChunked:
            throw .badRequest(.invalidTransferEncoding, "final transfer coding is not chunked")
        }
    }
}
