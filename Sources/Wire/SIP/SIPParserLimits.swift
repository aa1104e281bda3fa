/// Caps that keep hostile input bounded; exceeding a size cap is a 513 (RFC 3261 §21.5.11).
public struct SIPParserLimits: Hashable, Sendable {
    /// Whole message: start line, headers and body.
    public var maxMessageSize: Int
    /// Header lines after unfolding, Content-Length lines counted apart (each up to this many).
    public var maxHeaderCount: Int

    public init(maxMessageSize: Int = 65_535, maxHeaderCount: Int = 256) {
        self.maxMessageSize = maxMessageSize
        self.maxHeaderCount = maxHeaderCount
    }

    public static let `default` = SIPParserLimits()
}
