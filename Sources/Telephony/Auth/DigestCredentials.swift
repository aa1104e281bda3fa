import Wire

/// The `Authorization` / `Proxy-Authorization: Digest ...` answer to a challenge (RFC 7616 §3.4).
public struct DigestCredentials: Hashable, Sendable, CustomStringConvertible {
    public var username: String
    public var realm: String
    public var nonce: String
    public var uri: String
    public var response: String
    public var algorithm: DigestAlgorithm
    public var cnonce: String?
    public var qop: String?
    /// Nonce count as 8 hex digits.
    public var nonceCount: String?
    public var opaque: String?

    public init(username: String, realm: String, nonce: String, uri: String, response: String,
                algorithm: DigestAlgorithm, cnonce: String?, qop: String?, nonceCount: String?, opaque: String?) {
        self.username = username
        self.realm = realm
        self.nonce = nonce
        self.uri = uri
        self.response = response
        self.algorithm = algorithm
        self.cnonce = cnonce
        self.qop = qop
        self.nonceCount = nonceCount
        self.opaque = opaque
    }

    /// Answers `challenge` for `method` on `uri` (RFC 7616 §3.4.1): with qop=auth when offered,
    /// otherwise the RFC 2069 form.
    public static func answer(_ challenge: DigestChallenge, username: String, password: String, method: SIPMethod,
                              uri: String, cnonce: String, nonceCount: UInt32 = 1) throws(DigestError) -> DigestCredentials {
        let useQop: String?
        if challenge.qop.isEmpty {
            useQop = nil
        } else if challenge.qop.contains("auth") {
            useQop = "auth"
        } else {
            throw .unsupportedQop(challenge.qop.joined(separator: ","))
        }
        let nc = String(repeating: "0", count: 8 - String(nonceCount, radix: 16).count) + String(nonceCount, radix: 16)
        let response = compute(algorithm: challenge.algorithm, username: username, realm: challenge.realm, password: password,
                               method: method.rawValue, uri: uri, nonce: challenge.nonce,
                               nc: useQop == nil ? nil : nc, cnonce: useQop == nil ? nil : cnonce, qop: useQop)
        return DigestCredentials(username: username, realm: challenge.realm, nonce: challenge.nonce, uri: uri,
                                 response: response, algorithm: challenge.algorithm, cnonce: useQop == nil ? nil : cnonce,
                                 qop: useQop, nonceCount: useQop == nil ? nil : nc, opaque: challenge.opaque)
    }

    /// `KD(H(A1), nonce:nc:cnonce:qop:H(A2))`, or `KD(H(A1), nonce:H(A2))` without qop.
    public static func compute(algorithm: DigestAlgorithm, username: String, realm: String, password: String,
                               method: String, uri: String, nonce: String, nc: String?, cnonce: String?, qop: String?) -> String {
        let ha1 = algorithm.hex("\(username):\(realm):\(password)")
        return compute(algorithm: algorithm, ha1: ha1, method: method, uri: uri, nonce: nonce, nc: nc, cnonce: cnonce, qop: qop)
    }

    public static func compute(algorithm: DigestAlgorithm, ha1: String, method: String, uri: String, nonce: String,
                               nc: String?, cnonce: String?, qop: String?) -> String {
        let ha2 = algorithm.hex("\(method):\(uri)")
        if let qop, let nc, let cnonce {
            return algorithm.hex("\(ha1):\(nonce):\(nc):\(cnonce):\(qop):\(ha2)")
        }
        return algorithm.hex("\(ha1):\(nonce):\(ha2)")
    }

    public static func parse(_ header: String) throws(DigestError) -> DigestCredentials {
        let p = try DigestParameters.parse(header)
        func need(_ n: String) throws(DigestError) -> String {
            guard let v = p[n] else { throw .missingParameter(n) }
            return v
        }
        let algorithmName = p["algorithm"] ?? "MD5"
        guard let algorithm = DigestAlgorithm(name: algorithmName) else { throw .unsupportedAlgorithm(algorithmName) }
        return DigestCredentials(username: try need("username"), realm: try need("realm"), nonce: try need("nonce"),
                                 uri: try need("uri"), response: try need("response").lowercased(), algorithm: algorithm,
                                 cnonce: p["cnonce"], qop: p["qop"]?.lowercased(), nonceCount: p["nc"], opaque: p["opaque"])
    }

    public var description: String {
        var parts = ["username=\(digestQuote(username))", "realm=\(digestQuote(realm))", "nonce=\(digestQuote(nonce))",
                     "uri=\(digestQuote(uri))", "response=\(digestQuote(response))", "algorithm=\(algorithm.rawValue)"]
        if let cnonce { parts.append("cnonce=\(digestQuote(cnonce))") }
        if let opaque { parts.append("opaque=\(digestQuote(opaque))") }
        if let qop { parts.append("qop=\(qop)") }
        if let nonceCount { parts.append("nc=\(nonceCount)") }
        return "Digest " + parts.joined(separator: ", ")
    }
}
