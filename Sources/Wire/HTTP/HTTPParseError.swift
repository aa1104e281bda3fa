/// Why a request or response could not be parsed, and what a server should answer.
///
/// Every error leaves the parser failed (later calls rethrow it) because the message
/// boundary is lost, so `closesConnection` is true for all errors the parsers throw today;
/// the field exists so callers do not have to hard-code that.
public struct HTTPParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, for tests and metrics; `detail` carries the specifics.
    public enum Kind: Hashable, Sendable {
        case requestLineTooLong
        case invalidRequestLine
        case invalidMethod
        case invalidTarget
        case invalidVersion
        case unsupportedVersion
        case invalidStatusLine
        case invalidLineEnding
        case headerSectionTooLarge
        case tooManyHeaders
        case obsoleteLineFolding
        case invalidHeaderName
        case whitespaceBeforeColon
        case invalidHeaderValue
        case missingHost
        case multipleHosts
        case invalidContentLength
        case conflictingContentLength
        case contentLengthWithTransferEncoding
        case invalidTransferEncoding
        case unsupportedTransferEncoding
        case invalidChunk
        case bodyTooLarge
        case truncated
    }

    public var kind: Kind
    /// The status a server should answer with (400, 413, 414, 431, 501, 505).
    public var status: Int
    /// A short human-readable explanation with the offending value where useful.
    public var detail: String
    public var closesConnection: Bool

    public init(_ kind: Kind, status: Int, detail: String, closesConnection: Bool = true) {
        self.kind = kind
        self.status = status
        self.detail = detail
        self.closesConnection = closesConnection
    }

    /// The standard reason phrase of `status`.
    public var reason: String { HTTPResponseHead.reasonPhrase(for: status) }

    public var description: String { "\(status) \(reason): \(detail)" }

    static func badRequest(_ kind: Kind, _ detail: String) -> HTTPParseError {
        HTTPParseError(kind, status: 400, detail: detail)
    }
}
