/// Size limits that keep a peer from making a parser buffer without bound.
///
/// `maxBody` is checked against Content-Length as soon as the head is parsed, so a server
/// with a few large-upload routes should set it to the largest route limit and lower it
/// per route with `HTTPRequestParser.setBodyLimit(_:)` after `.head`.
public struct HTTPParserLimits: Hashable, Sendable {
    /// Longest request line (or status line), CRLF excluded. Exceeding it is 414.
    public var requestLine: Int
    /// Total bytes of the field lines (CRLFs included, trailers counted too). Exceeding it is 431.
    public var headerBytes: Int
    /// Most field lines in the header section plus trailers. Exceeding it is 431.
    public var headerCount: Int
    /// Largest decoded body. Exceeding it is 413.
    public var maxBody: Int
    /// Longest chunk-size line including ignored chunk extensions. Exceeding it is 400.
    public var chunkLine: Int

    public init(
        requestLine: Int = 8192,
        headerBytes: Int = 16384,
        headerCount: Int = 100,
        maxBody: Int = 1 << 20,
        chunkLine: Int = 4096
    ) {
        self.requestLine = requestLine
        self.headerBytes = headerBytes
        self.headerCount = headerCount
        self.maxBody = maxBody
        self.chunkLine = chunkLine
    }
}
