/// What `HTTPRequestParser.next()` found.
public enum HTTPParseEvent: Sendable, Equatable {
    /// The request line and headers; body events follow.
    case head(HTTPRequestHead)
    /// Body bytes as they arrive, chunked framing already removed; never empty.
    case body([UInt8])
    /// The message is complete; the parser moves on to the next pipelined request.
    case end
}

/// What `HTTPResponseParser.next()` found.
public enum HTTPResponseParseEvent: Sendable, Equatable {
    case head(HTTPResponseHead)
    case body([UInt8])
    case end
}
