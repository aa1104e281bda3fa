/// A `name-addr` or `addr-spec` with header parameters: the value of From, To, Contact, Route,
/// Record-Route, Refer-To (RFC 3261 §20.10, §25.1).
///
/// ```
/// "Alice Liddell" <sip:alice@example.com;transport=tcp>;tag=1928301774
/// sip:alice@example.com;tag=1928301774
/// ```
///
/// In the `addr-spec` form every `;` parameter belongs to the header, not the URI, so a URI
/// with parameters, headers or a comma must be written in angle brackets.
public struct SIPAddress: Hashable, Sendable, CustomStringConvertible {
    public var displayName: String?
    public var uri: SIPURI
    public var parameters: SIPParameters

    public init(displayName: String? = nil, uri: SIPURI, parameters: SIPParameters = SIPParameters()) {
        self.displayName = displayName
        self.uri = uri
        self.parameters = parameters
    }

    /// The `tag` parameter (RFC 3261 §19.3).
    public var tag: String? {
        get { parameters["tag"] }
        set { parameters["tag"] = newValue }
    }

    public static func parse(_ text: some StringProtocol) throws(SIPParseError) -> SIPAddress {
        let s = SIPSyntax.trim(Substring(text))
        guard !s.isEmpty else { throw .bad(.invalidAddress, "empty address") }
        var display: String?
        var afterDisplay: Substring
        if s.first == "\"" {
            let (name, rest) = try SIPSyntax.quotedString(s)
            display = name
            afterDisplay = SIPSyntax.trim(rest)
            guard afterDisplay.first == "<" else { throw .bad(.invalidAddress, "quoted display name without <URI>") }
        } else if let lt = SIPSyntax.firstUnquoted("<", in: s) {
            let name = SIPSyntax.trim(s[..<lt])
            guard name.utf8.allSatisfy({ SIPSyntax.isTokenChar($0) || $0 == SIPSyntax.space || $0 == SIPSyntax.tab }) else {
                throw .bad(.invalidAddress, "display name is neither a token list nor quoted")
            }
            if !name.isEmpty { display = String(name) }
            afterDisplay = s[lt...]
        } else {
            // addr-spec: parameters after the first semicolon are header parameters.
            let semi = s.firstIndex(of: ";")
            let uriText = SIPSyntax.trim(semi.map { s[..<$0] } ?? s)
            guard !uriText.contains("?"), !uriText.contains(","), !uriText.contains(where: SIPSyntax.isWhitespace) else {
                throw .bad(.invalidAddress, "URI with headers or commas must be in angle brackets")
            }
            let uri = try SIPURI.parse(uriText)
            let params = try semi.map { i throws(SIPParseError) in try SIPParameters.parseGeneric(s[s.index(after: i)...]) }
            return SIPAddress(uri: uri, parameters: params ?? SIPParameters())
        }
        guard let gt = afterDisplay.firstIndex(of: ">") else { throw .bad(.invalidAddress, "< without >") }
        let uriText = afterDisplay[afterDisplay.index(after: afterDisplay.startIndex)..<gt]
        guard !uriText.contains(where: SIPSyntax.isWhitespace) else { throw .bad(.invalidAddress, "whitespace inside <URI>") }
        let uri = try SIPURI.parse(uriText)
        let tail = SIPSyntax.trim(afterDisplay[afterDisplay.index(after: gt)...])
        var params = SIPParameters()
        if !tail.isEmpty {
            guard tail.first == ";" else { throw .bad(.invalidAddress, "text after <URI>") }
            params = try SIPParameters.parseGeneric(tail.dropFirst())
        }
        return SIPAddress(displayName: display, uri: uri, parameters: params)
    }

    public var description: String {
        var out = ""
        if let displayName { out += SIPSyntax.quote(displayName) + " " }
        out += "<\(uri)>" + parameters.description
        return out
    }
}
