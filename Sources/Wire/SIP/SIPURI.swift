/// A SIP, SIPS or tel URI (RFC 3261 §19.1, RFC 3966), or any other absolute URI kept opaque.
///
/// ```
/// sip:user:password@host:port;uri-parameters?headers
/// tel:+1-201-555-0123;phone-context=example.com
/// ```
///
/// `user` and `password` are stored unescaped and escaped again on output; parameter and
/// header values keep their wire form.
public struct SIPURI: Hashable, Sendable, CustomStringConvertible {
    public struct Header: Hashable, Sendable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Lowercased scheme: `sip`, `sips`, `tel`, or anything else.
    public var scheme: String
    /// The user part, or the telephone number of a tel URI.
    public var user: String?
    public var password: String?
    /// Host name, IPv4 literal or bracketed IPv6 reference; empty for tel and opaque URIs.
    public var host: String
    public var port: UInt16?
    public var parameters: SIPParameters
    public var headers: [Header]
    /// Everything after `scheme:` for schemes this codec does not model.
    public var opaque: String?

    public init(scheme: String = "sip", user: String? = nil, password: String? = nil, host: String, port: UInt16? = nil,
                parameters: SIPParameters = SIPParameters(), headers: [Header] = []) {
        self.scheme = scheme.lowercased()
        self.user = user
        self.password = password
        self.host = host
        self.port = port
        self.parameters = parameters
        self.headers = headers
        self.opaque = nil
    }

    /// A tel URI (RFC 3966).
    public static func tel(_ number: String, parameters: SIPParameters = SIPParameters()) -> SIPURI {
        SIPURI(scheme: "tel", user: number, host: "", parameters: parameters)
    }

    public var isSIP: Bool { scheme == "sip" || scheme == "sips" }
    /// Whether this is a scheme a SIP element can route (sip, sips, tel).
    public var isSupportedScheme: Bool { isSIP || scheme == "tel" }

    /// `transport` URI parameter, lowercased.
    public var transport: String? { parameters["transport"]?.lowercased() }

    /// Whether a request to this URI goes over TLS: `sips:`, or `;transport=tls`.
    public var isTLS: Bool { scheme == "sips" || transport == "tls" }

    /// `host:port` as used for sending, with the default port for the scheme.
    public var hostPort: (host: String, port: UInt16) {
        let bare = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        return (bare, port ?? (scheme == "sips" ? 5061 : 5060))
    }

    /// A URI a call can be placed to (NCCO `connect`, the Video API's `dial`): `sip:` or `sips:` with a host,
    /// at most 512 bytes, no whitespace or control characters, and a `transport` (if any) of udp, tcp or tls.
    public static func dialable(_ text: String) -> SIPURI? {
        guard text.utf8.count <= 512, !text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }), let uri = try? parse(text), uri.isSIP,
              !uri.host.isEmpty, uri.transport.map({ ["udp", "tcp", "tls"].contains($0) }) ?? true else { return nil }
        return uri
    }

    public static func parse(_ text: some StringProtocol) throws(SIPParseError) -> SIPURI {
        let text = Substring(text)
        guard let colon = text.firstIndex(of: ":") else { throw .bad(.invalidURI, "URI without scheme") }
        let schemeText = text[..<colon]
        guard let first = schemeText.utf8.first, SIPSyntax.isAlphaNum(first), first > UInt8(ascii: "9"),
              schemeText.utf8.allSatisfy({ SIPSyntax.isAlphaNum($0) || "+-.".utf8.contains($0) }) else {
            throw .bad(.invalidURI, "invalid URI scheme")
        }
        let scheme = schemeText.lowercased()
        let rest = text[text.index(after: colon)...]
        guard !rest.isEmpty, !rest.contains(where: { SIPSyntax.isWhitespace($0) || $0 == "<" || $0 == ">" || $0 == "\"" }) else {
            throw .bad(.invalidURI, "invalid characters in URI")
        }
        switch scheme {
        case "sip", "sips": return try parseSIP(scheme: scheme, rest)
        case "tel": return try parseTel(rest)
        default:
            var uri = SIPURI(scheme: scheme, host: "")
            uri.opaque = String(rest)
            return uri
        }
    }

    private static func parseSIP(scheme: String, _ text: Substring) throws(SIPParseError) -> SIPURI {
        var rest = text
        var user: String?
        var password: String?
        if let at = rest.firstIndex(of: "@") {
            let userinfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let userText: Substring
            var passwordText: Substring?
            if let c = userinfo.firstIndex(of: ":") {
                userText = userinfo[..<c]
                passwordText = userinfo[userinfo.index(after: c)...]
            } else {
                userText = userinfo
            }
            guard !userText.isEmpty, userText.utf8.allSatisfy({ SIPSyntax.isUserChar($0) || $0 == UInt8(ascii: "%") }),
                  let u = SIPSyntax.unescape(userText) else {
                throw .bad(.invalidURI, "invalid user part in URI")
            }
            user = u
            if let passwordText {
                guard passwordText.utf8.allSatisfy({ SIPSyntax.isPasswordChar($0) || $0 == UInt8(ascii: "%") }),
                      let p = SIPSyntax.unescape(passwordText) else { throw .bad(.invalidURI, "invalid password in URI") }
                password = p
            }
        }
        var headersText: Substring?
        if let q = rest.firstIndex(of: "?") {
            headersText = rest[rest.index(after: q)...]
            rest = rest[..<q]
        }
        var paramsText: Substring?
        if let semi = rest.firstIndex(of: ";") {
            paramsText = rest[rest.index(after: semi)...]
            rest = rest[..<semi]
        }
        let (host, port) = try parseHostPort(rest)
        var uri = SIPURI(scheme: scheme, user: user, password: password, host: host, port: port)
        if let paramsText { uri.parameters = try parseURIParameters(paramsText) }
        if let headersText {
            for pair in headersText.split(separator: "&", omittingEmptySubsequences: false) {
                guard let eq = pair.firstIndex(of: "="),
                      pair.utf8.allSatisfy({ SIPSyntax.isHeaderChar($0) || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "=") }),
                      !pair[..<eq].isEmpty else { throw .bad(.invalidURI, "invalid URI header") }
                uri.headers.append(Header(String(pair[..<eq]), String(pair[pair.index(after: eq)...])))
            }
        }
        return uri
    }

    static func parseHostPort(_ text: Substring) throws(SIPParseError) -> (String, UInt16?) {
        var hostText = text
        var port: UInt16?
        let portColon: Substring.Index?
        if text.first == "[" {
            guard let close = text.firstIndex(of: "]") else { throw .bad(.invalidURI, "unterminated IPv6 reference") }
            let after = text.index(after: close)
            hostText = text[..<after]
            portColon = after < text.endIndex ? after : nil
            if let portColon, text[portColon] != ":" { throw .bad(.invalidURI, "text after IPv6 reference") }
        } else {
            portColon = text.firstIndex(of: ":")
            if let portColon { hostText = text[..<portColon] }
        }
        if let portColon {
            guard let p = SIPSyntax.number(text[text.index(after: portColon)...], max: 65535) else {
                throw .bad(.invalidURI, "invalid port")
            }
            port = UInt16(p)
        }
        guard SIPSyntax.isValidHost(hostText) else { throw .bad(.invalidURI, "invalid host") }
        return (String(hostText), port)
    }

    private static func parseURIParameters(_ text: Substring) throws(SIPParseError) -> SIPParameters {
        var params = SIPParameters()
        for piece in text.split(separator: ";", omittingEmptySubsequences: false) {
            let ok = { (c: UInt8) in SIPSyntax.isParamChar(c) || c == UInt8(ascii: "%") }
            if let eq = piece.firstIndex(of: "=") {
                let name = piece[..<eq], value = piece[piece.index(after: eq)...]
                guard !name.isEmpty, !value.isEmpty, name.utf8.allSatisfy(ok), value.utf8.allSatisfy(ok) else {
                    throw .bad(.invalidURI, "invalid URI parameter")
                }
                params.items.append(.init(String(name), String(value)))
            } else {
                guard !piece.isEmpty, piece.utf8.allSatisfy(ok) else { throw .bad(.invalidURI, "invalid URI parameter") }
                params.items.append(.init(String(piece), nil))
            }
        }
        return params
    }

    private static func parseTel(_ text: Substring) throws(SIPParseError) -> SIPURI {
        let pieces = text.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        let number = pieces[0]
        guard !number.isEmpty,
              number.utf8.allSatisfy({ SIPSyntax.isHeaderChar($0) || $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "*") }),
              let n = SIPSyntax.unescape(number) else {
            throw .bad(.invalidURI, "invalid telephone number")
        }
        var uri = SIPURI.tel(n)
        if pieces.count == 2 { uri.parameters = try parseURIParameters(pieces[1]) }
        return uri
    }

    public var description: String {
        if let opaque { return "\(scheme):\(opaque)" }
        var out = scheme + ":"
        if scheme == "tel" {
            out += SIPSyntax.escape(user ?? "") { SIPSyntax.isHeaderChar($0) || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "*") }
            return out + parameters.description
        }
        if let user {
            out += SIPSyntax.escape(user, allowed: SIPSyntax.isUserChar)
            if let password { out += ":" + SIPSyntax.escape(password, allowed: SIPSyntax.isPasswordChar) }
            out += "@"
        }
        out += host
        if let port { out += ":\(port)" }
        out += parameters.description
        if !headers.isEmpty { out += "?" + headers.map { "\($0.name)=\($0.value)" }.joined(separator: "&") }
        return out
    }
}
