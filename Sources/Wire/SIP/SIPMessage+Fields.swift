/// Typed access to the header fields every SIP element uses; each parses on demand.
extension SIPMessage {
    public func vias() throws(SIPParseError) -> [SIPVia] {
        var out: [SIPVia] = []
        for item in try headers.list(SIPHeaderName.via) { out.append(try SIPVia.parse(item)) }
        return out
    }

    public func topVia() throws(SIPParseError) -> SIPVia {
        guard let first = try headers.list(SIPHeaderName.via).first else { throw .bad(.missingHeader, "missing Via") }
        return try SIPVia.parse(first)
    }

    public func from() throws(SIPParseError) -> SIPAddress { try address(SIPHeaderName.from) }
    public func to() throws(SIPParseError) -> SIPAddress { try address(SIPHeaderName.to) }

    public var callID: String? { headers[SIPHeaderName.callID] }

    public func cseq() throws(SIPParseError) -> SIPCSeq {
        guard let v = headers[SIPHeaderName.cseq] else { throw .bad(.missingHeader, "missing CSeq") }
        return try SIPCSeq.parse(v)
    }

    /// Max-Forwards, nil when absent (RFC 3261 §20.22: 0–255).
    public func maxForwards() throws(SIPParseError) -> Int? {
        guard let v = headers[SIPHeaderName.maxForwards] else { return nil }
        guard let n = SIPSyntax.number(Substring(v), max: 255) else { throw .bad(.invalidNumber, "Max-Forwards out of range") }
        return Int(n)
    }

    /// Whether Contact is `*` (a REGISTER removing every binding).
    public var isContactWildcard: Bool { headers[SIPHeaderName.contact] == "*" }

    public func contacts() throws(SIPParseError) -> [SIPAddress] {
        if isContactWildcard { return [] }
        return try addresses(SIPHeaderName.contact)
    }

    public func routes() throws(SIPParseError) -> [SIPAddress] { try addresses(SIPHeaderName.route) }
    public func recordRoutes() throws(SIPParseError) -> [SIPAddress] { try addresses(SIPHeaderName.recordRoute) }

    public func address(_ name: String) throws(SIPParseError) -> SIPAddress {
        guard let v = headers[name] else { throw .bad(.missingHeader, "missing \(SIPHeaderName.canonical(name))") }
        return try SIPAddress.parse(v)
    }

    public func addresses(_ name: String) throws(SIPParseError) -> [SIPAddress] {
        var out: [SIPAddress] = []
        for item in try headers.list(name) { out.append(try SIPAddress.parse(item)) }
        return out
    }

    /// Media type of the body, lowercased and without parameters (`application/sdp`).
    public var contentType: String? {
        guard let v = headers[SIPHeaderName.contentType] else { return nil }
        let base = v.split(separator: ";", maxSplits: 1).first.map { SIPSyntax.trim($0) } ?? ""
        return base.lowercased().filter { !SIPSyntax.isWhitespace($0) }
    }
}
