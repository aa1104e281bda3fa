/// Parsing whole messages: one datagram, or one framed message from `SIPStreamParser`.
extension SIPMessage {
    /// Parses one datagram (RFC 3261 §18.3): a Content-Length shorter than what follows the
    /// headers drops the extra octets, a longer one is an error, and a missing one means the
    /// body runs to the end of the datagram. Leading CRLF keep-alives are skipped.
    public static func parse(_ bytes: some Collection<UInt8>, limits: SIPParserLimits = .default) throws(SIPParseError) -> SIPMessage {
        guard bytes.count <= limits.maxMessageSize else {
            throw SIPParseError(.messageTooLarge, status: 513, "message of \(bytes.count) bytes exceeds \(limits.maxMessageSize)")
        }
        var data = Array(bytes)[...]
        while data.count >= 2, data[data.startIndex] == SIPSyntax.cr, data[data.startIndex + 1] == SIPSyntax.lf {
            data = data.dropFirst(2)
        }
        guard let headEnd = headerEnd(data, from: data.startIndex) else {
            throw .bad(.incomplete, "no empty line after the header fields")
        }
        var message = try parseHead(data[data.startIndex..<headEnd], limits: limits)
        let rest = data[(headEnd + 4)...]
        if let length = try message.declaredContentLength(limit: limits.maxMessageSize) {
            guard length <= rest.count else {
                throw .bad(.truncatedBody, "Content-Length \(length) exceeds the \(rest.count) body bytes received")
            }
            message.body = Array(rest.prefix(length))
        } else {
            message.body = Array(rest)
        }
        return message
    }

    /// Index of the CRLFCRLF that ends the header section, searching from `start`.
    static func headerEnd(_ data: ArraySlice<UInt8>, from start: Int) -> Int? {
        var i = max(start, data.startIndex)
        while i + 3 < data.endIndex {
            if data[i] == SIPSyntax.cr, data[i + 1] == SIPSyntax.lf, data[i + 2] == SIPSyntax.cr, data[i + 3] == SIPSyntax.lf {
                return i
            }
            i += 1
        }
        return nil
    }

    /// The Content-Length value: nil when absent; several differing values or a bad number are 400.
    func declaredContentLength(limit: Int) throws(SIPParseError) -> Int? {
        let values = headers.values(SIPHeaderName.contentLength)
        guard let first = values.first else { return nil }
        guard values.allSatisfy({ $0 == first }) else { throw .bad(.invalidContentLength, "conflicting Content-Length values") }
        guard let n = SIPSyntax.number(Substring(first), max: UInt64(UInt32.max)) else {
            throw .bad(.invalidContentLength, "invalid Content-Length")
        }
        guard n <= limit else { throw SIPParseError(.messageTooLarge, status: 513, "Content-Length \(n) exceeds \(limit)") }
        return Int(n)
    }

    /// Parses the start line and header fields (no CRLFCRLF).
    static func parseHead(_ head: ArraySlice<UInt8>, limits: SIPParserLimits) throws(SIPParseError) -> SIPMessage {
        var lines: [ArraySlice<UInt8>] = []
        var start = head.startIndex
        var i = head.startIndex
        while i < head.endIndex {
            let c = head[i]
            if c == SIPSyntax.cr {
                guard i + 1 < head.endIndex, head[i + 1] == SIPSyntax.lf else { throw .bad(.invalidHeader, "bare CR in header section") }
                lines.append(head[start..<i])
                i += 2
                start = i
                continue
            }
            if c == SIPSyntax.lf { throw .bad(.invalidHeader, "bare LF in header section") }
            i += 1
        }
        lines.append(head[start..<head.endIndex])
        guard let first = lines.first, !first.isEmpty else { throw .bad(.invalidStartLine, "empty start line") }
        let startLine = try parseStartLine(String(decoding: first, as: UTF8.self))

        var fields: [SIPHeaders.Field] = []
        var pendingName: String?
        var pendingValue = ""
        var (otherFields, lengthFields) = (0, 0)
        func flush() {
            if let name = pendingName { fields.append(SIPHeaders.Field(name, SIPSyntax.trim(pendingValue))) }
        }
        for line in lines.dropFirst() {
            if let c = line.first, c == SIPSyntax.space || c == SIPSyntax.tab {
                guard pendingName != nil else { throw .bad(.invalidHeader, "continuation line before any header") }
                pendingValue += " " + SIPSyntax.trim(String(decoding: line, as: UTF8.self))
                continue
            }
            flush()
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else { throw .bad(.invalidHeader, "header line without colon") }
            let nameText = String(decoding: line[line.startIndex..<colon], as: UTF8.self)
            let name = SIPSyntax.trim(Substring(nameText))
            guard SIPSyntax.isToken(name) else { throw .bad(.invalidHeader, "invalid header name") }
            // Content-Length is framing: counted apart, so that a message at the limit still parses once
            // `serialize` has written the Content-Length it always writes.
            if SIPHeaderName.canonical(name) == SIPHeaderName.contentLength { lengthFields += 1 } else { otherFields += 1 }
            guard otherFields <= limits.maxHeaderCount, lengthFields <= limits.maxHeaderCount else {
                throw SIPParseError(.tooManyHeaders, status: 513, "more than \(limits.maxHeaderCount) header fields")
            }
            pendingName = String(name)
            pendingValue = String(decoding: line[(colon + 1)...], as: UTF8.self)
        }
        flush()
        return SIPMessage(startLine: startLine, headers: SIPHeaders(fields))
    }

    static func parseStartLine(_ line: String) throws(SIPParseError) -> StartLine {
        if line.hasPrefix("SIP/") {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count >= 2 else { throw .bad(.invalidStartLine, "invalid status line") }
            try checkVersion(parts[0])
            guard parts[1].utf8.count == 3, let code = SIPSyntax.number(parts[1], max: 699), code >= 100 else {
                throw .bad(.invalidStatusCode, "invalid status code")
            }
            return .response(status: Int(code), reason: parts.count == 3 ? String(parts[2]) : "")
        }
        let parts = line.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts.allSatisfy({ !$0.isEmpty }) else {
            throw .bad(.invalidStartLine, "request line is not <method> SP <uri> SP <version>")
        }
        guard SIPSyntax.isToken(parts[0]) else { throw .bad(.invalidMethod, "invalid method") }
        try checkVersion(parts[2])
        let uri = try SIPURI.parse(parts[1])
        return .request(method: SIPMethod(String(parts[0])), uri: uri)
    }

    /// SIP/2.0 passes; another well-formed version is 505; anything else is 400.
    private static func checkVersion(_ text: Substring) throws(SIPParseError) {
        if text == "SIP/2.0" { return }
        let u = text.uppercased()
        guard u.hasPrefix("SIP/") else { throw .bad(.invalidStartLine, "invalid protocol version") }
        let nums = u.dropFirst(4).split(separator: ".", omittingEmptySubsequences: false)
        guard nums.count == 2, nums.allSatisfy({ SIPSyntax.number($0, max: 999) != nil }) else {
            throw .bad(.invalidStartLine, "invalid protocol version")
        }
        if nums[0] == "2", nums[1] == "0" { return }
        throw SIPParseError(.unsupportedVersion, status: 505, "version \(text) not supported")
    }
}
