/// Frames SIP messages on a stream transport (TCP, TLS) by Content-Length (RFC 3261 §18.3).
///
/// Feed bytes with `append`, then call `next()` until it returns nil (need more data). CRLF
/// keep-alives between messages (RFC 5626 §4.4.1) are skipped. Content-Length is mandatory on
/// streams: without it the message boundary is unknown, so the stream is failed. After an error
/// the parser stays failed and rethrows it; the connection should be closed.
public struct SIPStreamParser: Sendable {
    public let limits: SIPParserLimits
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Where the CRLFCRLF search resumes, so a slow header section is scanned once.
    private var scanIndex = 0
    private var pending: (message: SIPMessage, length: Int)?
    private var failure: SIPParseError?

    public init(limits: SIPParserLimits = .default) { self.limits = limits }

    public var bufferedByteCount: Int { buffer.count - readIndex }

    public mutating func append(contentsOf bytes: some Collection<UInt8>) {
        compact()
        buffer.append(contentsOf: bytes)
    }

    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
            scanIndex = 0
        } else if readIndex >= 4096, readIndex * 2 >= buffer.count {
            buffer.removeSubrange(0..<readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
    }

    /// The next complete message, or nil when more bytes are needed.
    public mutating func next() throws(SIPParseError) -> SIPMessage? {
        if let failure { throw failure }
        do {
            return try step()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func step() throws(SIPParseError) -> SIPMessage? {
        if pending == nil {
            while buffer.count - readIndex >= 2, buffer[readIndex] == SIPSyntax.cr, buffer[readIndex + 1] == SIPSyntax.lf {
                readIndex += 2
            }
            scanIndex = max(scanIndex, readIndex)
            let slice = buffer[readIndex...]
            guard let end = SIPMessage.headerEnd(slice, from: max(readIndex, scanIndex - 3)) else {
                scanIndex = buffer.count
                if buffer.count - readIndex > limits.maxMessageSize {
                    throw SIPParseError(.messageTooLarge, status: 513, "header section exceeds \(limits.maxMessageSize) bytes")
                }
                return nil
            }
            guard end - readIndex <= limits.maxMessageSize else {
                throw SIPParseError(.messageTooLarge, status: 513, "header section exceeds \(limits.maxMessageSize) bytes")
            }
            let message = try SIPMessage.parseHead(buffer[readIndex..<end], limits: limits)
            let headLength = end + 4 - readIndex
            guard let length = try message.declaredContentLength(limit: limits.maxMessageSize - headLength) else {
                throw .bad(.invalidContentLength, "Content-Length is required on stream transports")
            }
            readIndex = end + 4
            scanIndex = readIndex
            pending = (message, length)
        }
        guard let (message, length) = pending, buffer.count - readIndex >= length else { return nil }
        var complete = message
        complete.body = Array(buffer[readIndex..<(readIndex + length)])
        readIndex += length
        scanIndex = readIndex
        pending = nil
        return complete
    }
}
