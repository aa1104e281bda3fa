/// The header checks an element makes before acting on a message (RFC 3261 §8.2, §16.3, §20;
/// the invalid messages of RFC 4475 §3.1.2 and §3.3).
extension SIPMessage {
    /// Throws the error a server answers with, or returns when the mandatory header fields are
    /// present once and well-formed. Responses failing it are dropped rather than answered.
    public func validate() throws(SIPParseError) {
        for name in [SIPHeaderName.to, SIPHeaderName.from, SIPHeaderName.callID, SIPHeaderName.cseq, SIPHeaderName.via] {
            guard headers.contains(name) else { throw .bad(.missingHeader, "missing \(name)") }
        }
        for name in SIPHeaderName.singleHeaders where headers.values(name).count > 1 {
            throw .bad(.duplicateHeader, "more than one \(name)")
        }
        let vias = try vias()
        guard !vias.isEmpty else { throw .bad(.missingHeader, "missing Via") }
        _ = try from()
        _ = try to()
        let cseq = try cseq()
        guard let callID, !callID.isEmpty, !callID.contains(where: SIPSyntax.isWhitespace) else {
            throw .bad(.invalidHeader, "invalid Call-ID")
        }
        _ = try maxForwards()
        if !isContactWildcard {
            for contact in try contacts() {
                if let e = contact.parameters["expires"], SIPSyntax.number(Substring(e), max: UInt64(UInt32.max)) == nil {
                    throw .bad(.invalidNumber, "Contact expires out of range")
                }
            }
        }
        _ = try routes()
        _ = try recordRoutes()
        for name in [SIPHeaderName.expires, SIPHeaderName.retryAfter] {
            if let v = headers[name] {
                let number = v.split(separator: ";").first.map { SIPSyntax.trim($0) } ?? ""
                let digits = number.split(separator: "(").first.map { SIPSyntax.trim($0) } ?? ""
                guard SIPSyntax.number(digits, max: UInt64(UInt32.max)) != nil else {
                    throw .bad(.invalidNumber, "\(name) out of range")
                }
            }
        }
        if let date = headers[SIPHeaderName.date], !date.hasSuffix(" GMT") {
            throw .bad(.invalidDate, "Date must be in GMT")
        }
        if case .request(let method, let uri) = startLine {
            guard cseq.method == method else { throw .bad(.methodMismatch, "CSeq method does not match the request method") }
            guard uri.isSupportedScheme else {
                throw SIPParseError(.unsupportedURIScheme, status: 416, "URI scheme \(uri.scheme) not supported")
            }
            guard uri.headers.isEmpty else { throw .bad(.invalidURI, "headers in the Request-URI") }
        }
    }
}
