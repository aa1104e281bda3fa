/// What a WebSocket peer said, after fragments are joined (RFC 6455 section 5.4).
public enum WebSocketMessage: Sendable, Hashable {
    case text(String)
    case binary([UInt8])
    case ping([UInt8])
    case pong([UInt8])
    /// A close frame; `code` is nil when the frame had no body (seen locally as 1005).
    case close(code: WebSocketCloseCode?, reason: String)
}
