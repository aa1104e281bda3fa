/// The status line and header section of an HTTP/1.1 response (RFC 9112 section 4).
public struct HTTPResponseHead: Sendable, Equatable {
    public var version: HTTPVersion
    public var status: Int
    public var reason: String
    public var headers: HTTPHeaders

    /// A response head; `reason` defaults to the standard phrase for `status`.
    public init(status: Int, reason: String? = nil, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.version = version
        self.status = status
        self.reason = reason ?? Self.reasonPhrase(for: status)
        self.headers = headers
    }

    /// Whether the connection stays open after this response (RFC 9112 section 9.3).
    public var keepAlive: Bool {
        HTTPSyntax.persists(version: version, headers: headers)
    }

    /// Appends `HTTP/1.1 200 OK\r\n`, the fields and the blank line.
    ///
    /// The status is clamped to three digits and CR/LF/NUL in the reason or fields become
    /// spaces, so the output is always one well-formed head.
    public func serialize(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: version.description.utf8)
        buffer.append(HTTPSyntax.space)
        let code = min(max(status, 100), 999)
        buffer.append(UInt8(ascii: "0") + UInt8(code / 100))
        buffer.append(UInt8(ascii: "0") + UInt8(code / 10 % 10))
        buffer.append(UInt8(ascii: "0") + UInt8(code % 10))
        buffer.append(HTTPSyntax.space)
        HTTPSyntax.appendSanitized(reason, into: &buffer, allowSpace: true)
        buffer.append(HTTPSyntax.cr)
        buffer.append(HTTPSyntax.lf)
        HTTPSyntax.appendFields(headers, into: &buffer)
    }

    /// The head as bytes; see `serialize(into:)`.
    public func serialized() -> [UInt8] {
        var buffer: [UInt8] = []
        serialize(into: &buffer)
        return buffer
    }

    /// The RFC 9110 section 15 reason phrase, or "Unknown" for unregistered codes.
    public static func reasonPhrase(for status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 103: "Early Hints"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 402: "Payment Required"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 425: "Too Early"
        case 426: "Upgrade Required"
        case 428: "Precondition Required"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 451: "Unavailable For Legal Reasons"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Unknown"
        }
    }
}
