/// One `via-parm` of a Via header (RFC 3261 §20.42, §18.2.1, RFC 3581).
///
/// ```
/// Via: SIP/2.0/UDP 192.0.2.4:5060;branch=z9hG4bK776asdhds;received=192.0.2.1;rport=5061
/// ```
public struct SIPVia: Hashable, Sendable, CustomStringConvertible {
    /// The RFC 3261 branch prefix that marks a globally unique transaction ID (§8.1.1.7).
    public static let magicCookie = "z9hG4bK"

    /// Uppercased: `UDP`, `TCP`, `TLS`, `SCTP`, `WS`, ...
    public var transport: String
    public var host: String
    public var port: UInt16?
    public var parameters: SIPParameters

    public init(transport: String, host: String, port: UInt16? = nil, parameters: SIPParameters = SIPParameters()) {
        self.transport = transport.uppercased()
        self.host = host
        self.port = port
        self.parameters = parameters
    }

    public var branch: String? {
        get { parameters["branch"] }
        set { parameters["branch"] = newValue }
    }

    public var received: String? {
        get { parameters["received"] }
        set { parameters["received"] = newValue }
    }

    /// `rport` (RFC 3581): nil when absent, 0 when present without a value.
    public var rport: UInt16? {
        guard let v = parameters["rport"] else { return nil }
        return v.isEmpty ? 0 : UInt16(v)
    }

    /// Whether the branch carries the RFC 3261 magic cookie.
    public var hasRFC3261Branch: Bool { branch?.hasPrefix(Self.magicCookie) ?? false }

    /// Parses one via-parm; the header value may hold several, split on commas first.
    public static func parse(_ text: some StringProtocol) throws(SIPParseError) -> SIPVia {
        var s = SIPSyntax.trim(Substring(text))
        func slashPart() throws(SIPParseError) -> Substring {
            guard let slash = s.firstIndex(of: "/") else { throw .bad(.invalidVia, "Via without sent-protocol") }
            let part = SIPSyntax.trim(s[..<slash])
            s = SIPSyntax.trim(s[s.index(after: slash)...])
            return part
        }
        let name = try slashPart()
        let version = try slashPart()
        guard name.uppercased() == "SIP", version == "2.0" else { throw .bad(.invalidVia, "Via protocol is not SIP/2.0") }
        guard let ws = s.firstIndex(where: SIPSyntax.isWhitespace) else { throw .bad(.invalidVia, "Via without sent-by") }
        let transport = s[..<ws]
        guard SIPSyntax.isToken(transport) else { throw .bad(.invalidVia, "invalid Via transport") }
        s = SIPSyntax.trim(s[ws...])
        let semi = s.firstIndex(of: ";")
        let sentBy = SIPSyntax.trim(semi.map { s[..<$0] } ?? s)
        guard !sentBy.contains(where: SIPSyntax.isWhitespace) else { throw .bad(.invalidVia, "whitespace in Via sent-by") }
        let hostPort: (String, UInt16?)
        do { hostPort = try SIPURI.parseHostPort(sentBy) } catch { throw .bad(.invalidVia, "invalid Via sent-by") }
        var via = SIPVia(transport: String(transport), host: hostPort.0, port: hostPort.1)
        if let semi {
            via.parameters = try SIPParameters.parseGeneric(s[s.index(after: semi)...])
            if let b = via.parameters["branch"], b.isEmpty { throw .bad(.invalidVia, "empty branch") }
        }
        return via
    }

    public var description: String {
        "SIP/2.0/\(transport) \(host)" + (port.map { ":\($0)" } ?? "") + parameters.description
    }
}
