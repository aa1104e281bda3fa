import Foundation
import Wire

/// JSON Web Tokens (RFC 7519) in JWS compact serialization (RFC 7515 section 7.1),
/// signed with RS256 or HS256.
public enum JWT {
    /// Longer tokens are refused before any decoding, so a peer cannot make us parse megabytes.
    public static let maxTokenLength = 64 * 1024

    // MARK: Signing

    /// Signs `claims`; the header gets `alg` from the key and `typ: JWT`, plus `header` extras
    /// such as `kid` (extras cannot override `alg`).
    public static func sign(
        claims: [String: JSONValue], key: SigningKey, header: [String: JSONValue] = [:]
    ) throws(JWTError) -> String {
        let payload: [UInt8]
        do { payload = try encodeJSON(claims) } catch { throw .signingFailed("claims: \(error)") }
        return try sign(payloadJSON: payload, key: key, header: header)
    }

    /// Signs any `Encodable` claims value (it must encode as a JSON object).
    public static func sign<Claims: Encodable>(
        claims: Claims, key: SigningKey, header: [String: JSONValue] = [:]
    ) throws(JWTError) -> String {
        let payload: [UInt8]
        do { payload = try encodeJSON(claims) } catch { throw .signingFailed("claims: \(error)") }
        guard payload.first == UInt8(ascii: "{") else { throw .signingFailed("claims must encode as a JSON object") }
        return try sign(payloadJSON: payload, key: key, header: header)
    }

    static func sign(payloadJSON: [UInt8], key: SigningKey, header extra: [String: JSONValue]) throws(JWTError) -> String {
        var header = extra
        header["alg"] = .string(key.algorithm.rawValue)
        if header["typ"] == nil { header["typ"] = "JWT" }
        let headerJSON: [UInt8]
        do { headerJSON = try encodeJSON(header) } catch { throw .signingFailed("header: \(error)") }
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(payloadJSON)
        let input = Array(signingInput.utf8)
        let signature: [UInt8]
        switch key {
        case .rs256(let privateKey):
            do { signature = try privateKey.sign(sha256: input) } catch { throw .signingFailed("\(error)") }
        case .hs256(let secret):
            signature = HMAC.sha256(key: secret, data: input)
        }
        return signingInput + "." + Base64URL.encode(signature)
    }

    // MARK: Decoding

    /// Splits and decodes a token without checking its signature or claims.
    public static func decode(_ token: String) throws(JWTError) -> Decoded {
        let bytes = Array(token.utf8)
        guard bytes.count <= maxTokenLength else { throw .malformed("token longer than \(maxTokenLength) bytes") }
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else { throw .malformed("expected 3 dot-separated parts, found \(dots.count + 1)") }
        let headerPart = bytes[..<dots[0]]
        let payloadPart = bytes[(dots[0] + 1)..<dots[1]]
        let signaturePart = bytes[(dots[1] + 1)...]
        guard let headerJSON = Base64URL.decode(bytes: headerPart) else { throw .malformed("header is not base64url") }
        guard let payloadJSON = Base64URL.decode(bytes: payloadPart) else { throw .malformed("payload is not base64url") }
        guard let signature = Base64URL.decode(bytes: signaturePart) else { throw .malformed("signature is not base64url") }
        guard case .object(let header)? = try? decodeJSON(headerJSON) else { throw .malformed("header is not a JSON object") }
        guard case .object(let claims)? = try? decodeJSON(payloadJSON) else { throw .malformed("payload is not a JSON object") }
        return Decoded(header: header, claims: claims, signingInput: Array(bytes[..<dots[1]]), signature: signature)
    }

    // MARK: Verification

    /// Verifies signature and time claims and returns the claims.
    ///
    /// - `alg` must equal the key's algorithm (`none` and mismatches are refused before any crypto).
    /// - `exp` is required when `requireExpiration`, and must not be more than `leeway` in the past.
    /// - `nbf` and `iat` must not be more than `leeway` in the future.
    /// - With `maxLifetime`, `exp` is required and `exp - iat` (or `exp - now` without `iat`) may not exceed it.
    /// - Every name in `requiredClaims` must be present.
    public static func verify(
        _ token: String,
        key: VerificationKey,
        now: Date,
        leeway: TimeInterval = 60,
        requireExpiration: Bool = true,
        maxLifetime: TimeInterval? = nil,
        requiredClaims: [String] = []
    ) throws(JWTError) -> [String: JSONValue] {
        let decoded = try decode(token)
        try checkSignature(decoded, key: key)
        try checkClaims(
            decoded.claims, now: now.timeIntervalSince1970, leeway: leeway,
            requireExpiration: requireExpiration, maxLifetime: maxLifetime, requiredClaims: requiredClaims)
        return decoded.claims
    }

    /// Same as `verify(_:key:now:...)` with `now` in Unix seconds.
    public static func verify(
        _ token: String,
        key: VerificationKey,
        now: Int,
        leeway: TimeInterval = 60,
        requireExpiration: Bool = true,
        maxLifetime: TimeInterval? = nil,
        requiredClaims: [String] = []
    ) throws(JWTError) -> [String: JSONValue] {
        try verify(
            token, key: key, now: Date(timeIntervalSince1970: TimeInterval(now)), leeway: leeway,
            requireExpiration: requireExpiration, maxLifetime: maxLifetime, requiredClaims: requiredClaims)
    }

    /// Checks `alg` against the key, then the signature (RFC 7515 section 5.2 steps 8-10).
    public static func checkSignature(_ decoded: Decoded, key: VerificationKey) throws(JWTError) {
        guard let alg = decoded.algorithm else { throw .malformed("header has no string alg") }
        guard alg == key.algorithm.rawValue else { throw .unsupportedAlgorithm(alg) }
        // RFC 7515 section 4.1.11: extensions we do not understand must make the token invalid.
        if decoded.header["crit"] != nil { throw .unsupportedAlgorithm("crit header not supported") }
        switch key {
        case .rs256(let publicKey):
            guard publicKey.verify(signature: decoded.signature, sha256: decoded.signingInput) else { throw .badSignature }
        case .hs256(let secret):
            let expected = HMAC.sha256(key: secret, data: decoded.signingInput)
            guard constantTimeEquals(expected, decoded.signature) else { throw .badSignature }
        }
    }

    /// Applies the time and presence rules of `verify` to already-authenticated claims.
    public static func checkClaims(
        _ claims: [String: JSONValue],
        now: TimeInterval,
        leeway: TimeInterval = 60,
        requireExpiration: Bool = true,
        maxLifetime: TimeInterval? = nil,
        requiredClaims: [String] = []
    ) throws(JWTError) {
        let exp = try numericDate(claims, "exp")
        let nbf = try numericDate(claims, "nbf")
        let iat = try numericDate(claims, "iat")
        if exp == nil, requireExpiration || maxLifetime != nil { throw .missingClaim("exp") }
        for name in requiredClaims where claims[name] == nil { throw .missingClaim(name) }
        if let exp, now >= exp + leeway { throw .expired }
        if let nbf, now + leeway < nbf { throw .notYetValid }
        if let iat, now + leeway < iat { throw .notYetValid }
        if let maxLifetime, let exp, exp - (iat ?? now) > maxLifetime { throw .lifetimeTooLong }
    }

    /// A NumericDate claim (RFC 7519 section 2): a JSON number of seconds since the epoch.
    private static func numericDate(_ claims: [String: JSONValue], _ name: String) throws(JWTError) -> Double? {
        guard let value = claims[name] else { return nil }
        guard case .number(let n) = value, n.isFinite else { throw .malformed("\(name) is not a number") }
        return n
    }

    // MARK: JSON

    static func encodeJSON<T: Encodable>(_ value: T) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// Our own parser: JSONDecoder cost several times the RSA verification on every request.
    static func decodeJSON(_ bytes: [UInt8]) throws -> JSONValue {
        try JSONParser.parse(bytes)
    }
}
