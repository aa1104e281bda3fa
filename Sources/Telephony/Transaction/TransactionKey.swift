import Wire

/// Identifies a transaction for matching (RFC 3261 §17.1.3, §17.2.3).
///
/// With an RFC 3261 branch (magic cookie) the key is branch, sent-by and method, with ACK
/// matching its INVITE. Without one (RFC 2543 peers) the key is built from the Request-URI,
/// From tag, Call-ID, CSeq number and the top Via; the To tag is left out so an ACK (which
/// carries the tag of our response) still matches the INVITE.
public enum TransactionKey: Hashable, Sendable {
    case rfc3261(branch: String, sentBy: String, method: SIPMethod)
    case rfc2543(requestURI: String, fromTag: String, callID: String, sequence: UInt32, via: String, method: SIPMethod)

    /// The key of the server transaction a request belongs to.
    public static func server(for request: SIPMessage) throws(SIPParseError) -> TransactionKey {
        guard let method = request.method, let uri = request.requestURI else {
            throw SIPParseError(.invalidStartLine, "not a request")
        }
        let via = try request.topVia()
        let matched = method == .ack ? SIPMethod.invite : method
        if via.hasRFC3261Branch, let branch = via.branch {
            return .rfc3261(branch: branch, sentBy: "\(via.host.lowercased()):\(via.port ?? 5060)", method: matched)
        }
        let cseq = try request.cseq()
        return .rfc2543(requestURI: uri.description, fromTag: try request.from().tag ?? "", callID: request.callID ?? "",
                        sequence: cseq.sequence, via: via.description, method: matched)
    }

    /// The key of the client transaction a response belongs to: top Via branch and CSeq method.
    public static func client(for response: SIPMessage) throws(SIPParseError) -> TransactionKey {
        let via = try response.topVia()
        guard let branch = via.branch else { throw SIPParseError(.invalidVia, "response Via without branch") }
        return .rfc3261(branch: branch, sentBy: "", method: try response.cseq().method)
    }

    /// The key a client transaction registers under for the request it sends.
    public static func client(branch: String, method: SIPMethod) -> TransactionKey {
        .rfc3261(branch: branch, sentBy: "", method: method)
    }
}

extension TransactionKey {
    /// The method the transaction was opened with (ACK counts as its INVITE).
    public var method: SIPMethod {
        switch self {
        case .rfc3261(_, _, let method), .rfc2543(_, _, _, _, _, let method): method
        }
    }
}
