/// Why bytes are not a usable SIP message, and what a server should answer (RFC 3261 §21).
///
/// `status` is the response a server sends to a malformed request: 400 with `detail` as the
/// reason phrase, 505 for a version other than SIP/2.0, 513 for a message over the size limit,
/// 416 for a Request-URI scheme other than sip, sips or tel. Malformed responses are dropped,
/// so callers check whether the input was a response before answering.
public struct SIPParseError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        case incomplete
        case messageTooLarge
        case invalidStartLine
        case invalidMethod
        case unsupportedVersion
        case invalidStatusCode
        case invalidHeader
        case missingHeader
        case duplicateHeader
        case invalidURI
        case unsupportedURIScheme
        case invalidAddress
        case invalidVia
        case invalidCSeq
        case methodMismatch
        case invalidNumber
        case invalidContentLength
        case truncatedBody
        case invalidDate
        case tooManyHeaders
    }

    public var kind: Kind
    /// The status a server answers a malformed request with.
    public var status: Int
    /// Short, single-line explanation; safe to use as a reason phrase.
    public var detail: String

    public init(_ kind: Kind, status: Int = 400, _ detail: String) {
        self.kind = kind
        self.status = status
        // A reason phrase must stay on one line and printable.
        self.detail = String(detail.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "?" : Character($0) })
    }

    public var description: String { "\(status) \(detail)" }

    static func bad(_ kind: Kind, _ detail: String) -> SIPParseError { SIPParseError(kind, detail) }
}
