/// A SIP request or response (RFC 3261 §7).
///
/// ```
/// INVITE sip:bob@biloxi.com SIP/2.0          SIP/2.0 200 OK
/// Via: SIP/2.0/UDP pc33.atlanta.com;branch=z9hG4bK776asdhds
/// Max-Forwards: 70
/// To: Bob <sip:bob@biloxi.com>
/// From: Alice <sip:alice@atlanta.com>;tag=1928301774
/// Call-ID: a84b4c76e66710@pc33.atlanta.com
/// CSeq: 314159 INVITE
/// Contact: <sip:alice@pc33.atlanta.com>
/// Content-Type: application/sdp
/// Content-Length: 142
///
/// <body>
/// ```
///
/// Parsing (`SIPMessage+Parsing`) checks the framing and the start line; `validate()` checks the
/// header fields every element relies on; typed accessors (`SIPMessage+Fields`) parse on demand.
public struct SIPMessage: Hashable, Sendable {
    public enum StartLine: Hashable, Sendable {
        case request(method: SIPMethod, uri: SIPURI)
        case response(status: Int, reason: String)
    }

    public var startLine: StartLine
    public var headers: SIPHeaders
    public var body: [UInt8]

    public init(startLine: StartLine, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) {
        self.startLine = startLine
        self.headers = headers
        self.body = body
    }

    public static func request(_ method: SIPMethod, _ uri: SIPURI, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) -> SIPMessage {
        SIPMessage(startLine: .request(method: method, uri: uri), headers: headers, body: body)
    }

    public static func response(_ status: Int, _ reason: String? = nil, headers: SIPHeaders = SIPHeaders(), body: [UInt8] = []) -> SIPMessage {
        SIPMessage(startLine: .response(status: status, reason: reason ?? SIPMessage.reasonPhrase(status)), headers: headers, body: body)
    }

    public var isRequest: Bool { if case .request = startLine { true } else { false } }
    public var isResponse: Bool { !isRequest }

    public var method: SIPMethod? { if case .request(let m, _) = startLine { m } else { nil } }
    public var requestURI: SIPURI? { if case .request(_, let u) = startLine { u } else { nil } }
    public var status: Int? { if case .response(let s, _) = startLine { s } else { nil } }
    public var reason: String? { if case .response(_, let r) = startLine { r } else { nil } }

    /// The standard reason phrase for `status` (RFC 3261 §21 and extensions).
    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 100: "Trying"
        case 180: "Ringing"
        case 181: "Call Is Being Forwarded"
        case 182: "Queued"
        case 183: "Session Progress"
        case 200: "OK"
        case 202: "Accepted"
        case 301: "Moved Permanently"
        case 302: "Moved Temporarily"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 415: "Unsupported Media Type"
        case 416: "Unsupported URI Scheme"
        case 420: "Bad Extension"
        case 421: "Extension Required"
        case 423: "Interval Too Brief"
        case 480: "Temporarily Unavailable"
        case 481: "Call/Transaction Does Not Exist"
        case 482: "Loop Detected"
        case 483: "Too Many Hops"
        case 486: "Busy Here"
        case 487: "Request Terminated"
        case 488: "Not Acceptable Here"
        case 489: "Bad Event"
        case 491: "Request Pending"
        case 500: "Server Internal Error"
        case 501: "Not Implemented"
        case 503: "Service Unavailable"
        case 504: "Server Time-out"
        case 505: "Version Not Supported"
        case 513: "Message Too Large"
        case 600: "Busy Everywhere"
        case 603: "Decline"
        case 604: "Does Not Exist Anywhere"
        case 606: "Not Acceptable"
        default: status < 200 ? "Progress" : status < 300 ? "Success" : "Error"
        }
    }
}
