/// The request line and header section of an HTTP/1.1 request (RFC 9112 sections 3 and 5).
public struct HTTPRequestHead: Sendable, Equatable {
    public var method: HTTPMethod
    /// The request-target exactly as sent: origin-form `/a?b`, absolute-form, authority-form or `*`.
    public var target: String
    public var version: HTTPVersion
    public var headers: HTTPHeaders

    public init(method: HTTPMethod, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The target up to the first `?`, still percent-encoded.
    public var path: String {
        if let mark = target.firstIndex(of: "?") { return String(target[..<mark]) }
        return target
    }

    /// The target after the first `?` (possibly empty), or nil when there is no `?`.
    public var query: String? {
        guard let mark = target.firstIndex(of: "?") else { return nil }
        return String(target[target.index(after: mark)...])
    }

    /// Whether the connection stays open after this exchange (RFC 9112 section 9.3):
    /// HTTP/1.1 persists unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`.
    public var keepAlive: Bool {
        HTTPSyntax.persists(version: version, headers: headers)
    }

    /// `Expect: 100-continue` (RFC 9110 section 10.1.1): the client waits for a 100 before the body.
    public var expectsContinue: Bool {
        headers.containsToken("100-continue", in: "Expect")
    }

    /// The client asks to switch protocols (RFC 9110 section 7.8): an Upgrade field named in Connection.
    public var isUpgrade: Bool {
        headers.contains(name: "Upgrade") && headers.containsToken("upgrade", in: "Connection")
    }

    /// Whether the request said how long its body is. Without Content-Length or
    /// Transfer-Encoding the body is empty (RFC 9112 section 6.3), but a server that
    /// needs a body may prefer to answer 411 Length Required.
    public var hasBodyFraming: Bool {
        headers.contains(name: "Content-Length") || headers.contains(name: "Transfer-Encoding")
    }

    /// Appends the request line and header section, ending with the blank line.
    ///
    /// CR, LF and NUL in names or values are replaced by spaces so a value taken from
    /// user input cannot inject fields.
    public func serialize(into buffer: inout [UInt8]) {
        buffer.append(contentsOf: method.rawValue.utf8)
        buffer.append(HTTPSyntax.space)
        HTTPSyntax.appendSanitized(target.isEmpty ? "/" : target, into: &buffer, allowSpace: false)
        buffer.append(HTTPSyntax.space)
        buffer.append(contentsOf: version.description.utf8)
        buffer.append(HTTPSyntax.cr)
        buffer.append(HTTPSyntax.lf)
        HTTPSyntax.appendFields(headers, into: &buffer)
    }
}
