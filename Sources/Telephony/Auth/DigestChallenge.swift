import Wire

/// A `WWW-Authenticate` / `Proxy-Authenticate: Digest ...` challenge (RFC 3261 §22.4, RFC 7616 §3.3).
public struct DigestChallenge: Hashable, Sendable, CustomStringConvertible {
    public var realm: String
    public var nonce: String
    public var opaque: String?
    public var algorithm: DigestAlgorithm
    /// Offered qop values; empty for an RFC 2069-style challenge.
    public var qop: [String]
    public var stale: Bool

    public init(realm: String, nonce: String, opaque: String? = nil, algorithm: DigestAlgorithm = .md5,
                qop: [String] = ["auth"], stale: Bool = false) {
        self.realm = realm
        self.nonce = nonce
        self.opaque = opaque
        self.algorithm = algorithm
        self.qop = qop
        self.stale = stale
    }

    public static func parse(_ header: String) throws(DigestError) -> DigestChallenge {
        let p = try DigestParameters.parse(header)
        guard let realm = p["realm"] else { throw .missingParameter("realm") }
        guard let nonce = p["nonce"] else { throw .missingParameter("nonce") }
        let algorithmName = p["algorithm"] ?? "MD5"
        guard let algorithm = DigestAlgorithm(name: algorithmName) else { throw .unsupportedAlgorithm(algorithmName) }
        let qop = (p["qop"] ?? "").split(separator: ",").map { String($0.trimmingSpaces).lowercased() }.filter { !$0.isEmpty }
        return DigestChallenge(realm: realm, nonce: nonce, opaque: p["opaque"], algorithm: algorithm, qop: qop,
                               stale: p["stale"]?.lowercased() == "true")
    }

    public var description: String {
        var parts = ["realm=\(digestQuote(realm))", "nonce=\(digestQuote(nonce))"]
        if let opaque { parts.append("opaque=\(digestQuote(opaque))") }
        parts.append("algorithm=\(algorithm.rawValue)")
        if !qop.isEmpty { parts.append("qop=\(digestQuote(qop.joined(separator: ",")))") }
        if stale { parts.append("stale=TRUE") }
        return "Digest " + parts.joined(separator: ", ")
    }
}
