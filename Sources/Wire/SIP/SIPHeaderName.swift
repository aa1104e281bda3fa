/// Header names: canonical spelling and compact forms (RFC 3261 §7.3.3, §20; RFC 3515, RFC 4028, RFC 3265).
public enum SIPHeaderName {
    public static let via = "Via", from = "From", to = "To", callID = "Call-ID", cseq = "CSeq"
    public static let contact = "Contact", maxForwards = "Max-Forwards", contentLength = "Content-Length"
    public static let contentType = "Content-Type", route = "Route", recordRoute = "Record-Route"
    public static let allow = "Allow", supported = "Supported", require = "Require", proxyRequire = "Proxy-Require"
    public static let unsupported = "Unsupported", expires = "Expires", date = "Date", userAgent = "User-Agent"
    public static let wwwAuthenticate = "WWW-Authenticate", authorization = "Authorization"
    public static let proxyAuthenticate = "Proxy-Authenticate", proxyAuthorization = "Proxy-Authorization"
    public static let rseq = "RSeq", rack = "RAck", accept = "Accept", reason = "Reason", retryAfter = "Retry-After"
    public static let server = "Server", subject = "Subject"

    private static let compact: [String: String] = [
        "i": "Call-ID", "m": "Contact", "e": "Content-Encoding", "l": "Content-Length", "c": "Content-Type",
        "f": "From", "s": "Subject", "k": "Supported", "t": "To", "v": "Via", "o": "Event", "r": "Refer-To",
        "b": "Referred-By", "u": "Allow-Events", "x": "Session-Expires", "a": "Accept-Contact", "j": "Reject-Contact",
        "d": "Request-Disposition", "y": "Identity", "n": "Identity-Info",
    ]

    private static let known: [String: String] = {
        let names = [
            "Via", "From", "To", "Call-ID", "CSeq", "Contact", "Max-Forwards", "Content-Length", "Content-Type",
            "Route", "Record-Route", "Allow", "Supported", "Require", "Proxy-Require", "Unsupported", "Expires",
            "Date", "User-Agent", "Server", "WWW-Authenticate", "Authorization", "Proxy-Authenticate",
            "Proxy-Authorization", "Authentication-Info", "RSeq", "RAck", "Accept", "Accept-Encoding",
            "Accept-Language", "Reason", "Retry-After", "Subject", "Warning", "Min-Expires", "Content-Disposition",
            "Content-Encoding", "Content-Language", "Event", "Refer-To", "Referred-By", "Session-Expires", "Min-SE",
            "Allow-Events", "Call-Info", "Alert-Info", "Error-Info", "In-Reply-To", "MIME-Version", "Organization",
            "Priority", "Reply-To", "Timestamp", "P-Asserted-Identity", "Accept-Contact", "Reject-Contact",
            "Request-Disposition", "Identity", "Identity-Info",
        ]
        var map: [String: String] = [:]
        for n in names { map[n.lowercased()] = n }
        return map
    }()

    /// Headers whose value is a comma-separated list that may also be split over several lines (§7.3.1).
    static let listHeaders: Set<String> = [
        "Via", "Route", "Record-Route", "Contact", "Allow", "Supported", "Require", "Proxy-Require", "Unsupported",
        "Accept", "Accept-Encoding", "Accept-Language", "Allow-Events", "Content-Encoding", "Content-Language",
        "Warning", "Call-Info", "Alert-Info", "Error-Info", "In-Reply-To", "Reply-To", "P-Asserted-Identity",
    ]

    /// Headers that must appear at most once.
    static let singleHeaders: [String] = [
        "From", "To", "Call-ID", "CSeq", "Max-Forwards", "Content-Length", "Content-Type", "Expires", "RSeq", "RAck",
    ]

    /// The canonical spelling of `name`: compact forms expanded, known names in their RFC case,
    /// unknown names unchanged.
    public static func canonical(_ name: some StringProtocol) -> String {
        if name.utf8.count == 1, let full = compact[name.lowercased()] { return full }
        return known[name.lowercased()] ?? String(name)
    }
}
