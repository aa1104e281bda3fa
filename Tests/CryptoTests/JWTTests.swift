import Foundation
import Testing
import Wire
@testable import Crypto

@Suite("JSON Web Tokens")
struct JWTTests {
    static let a1Token = "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
        + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        + ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let a1Key = Base64URL.decode("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow")!
    /// One minute before the RFC examples' `exp`.
    static let rfcNow = 1_300_819_380 - 60
    static let now = 1_800_000_000
    static let secret = Array("0123456789abcdef0123456789abcdef".utf8)

    // MARK: Published vectors

    @Test("RFC 7515 A.1 HS256 example verifies")
    func rfcA1() throws {
        let claims = try JWT.verify(Self.a1Token, key: .hs256(Self.a1Key), now: Self.rfcNow)
        #expect(claims["iss"] == "joe")
        #expect(claims["exp"]?.intValue == 1_300_819_380)
        #expect(claims["http://example.com/is_root"] == true)
        #expect(throws: JWTError.expired) {
            try JWT.verify(Self.a1Token, key: .hs256(Self.a1Key), now: 1_300_819_380 + 61)
        }
    }

    @Test("RFC 7515 A.2 RS256 example verifies")
    func rfcA2() throws {
        let key = try RSAPublicKey(pem: Fixtures.text("jwt/rfc7515_a2_public.pem"))
        let token = try Fixtures.line("jwt/rfc7515_a2.jwt")
        let claims = try JWT.verify(token, key: .rs256(key), now: Self.rfcNow)
        #expect(claims["iss"] == "joe")
        let decoded = try JWT.decode(token)
        #expect(decoded.header == ["alg": "RS256"])
        #expect(decoded.signature.count == 256)
        #expect(String(decoding: decoded.signingInput, as: UTF8.self) == token.split(separator: ".").prefix(2).joined(separator: "."))
    }

    // MARK: Interop fixtures

    @Test("PyJWT RS256 token verifies")
    func pyjwtRS256() throws {
        let key = try RSAPublicKey(pem: Fixtures.text("jwt/pyjwt_public.pem"))
        let token = try Fixtures.line("jwt/pyjwt_rs256.jwt")
        let claims = try JWT.verify(token, key: .rs256(key), now: Self.now, maxLifetime: nil)
        #expect(claims["sub"] == "interop")
        #expect(claims["n"]?.doubleValue == 1.5)
        #expect(claims["n"]?.intValue == nil)
        #expect(claims["ok"] == true)
        #expect(try JWT.decode(token).header["kid"] == "interop-1")
        // The PKCS#1 form of the same key works as well.
        let pkcs1 = try RSAPublicKey(pem: Fixtures.text("jwt/pyjwt_public_pkcs1.pem"))
        _ = try JWT.verify(token, key: .rs256(pkcs1), now: Self.now)
    }

    @Test("PyJWT HS256 token verifies")
    func pyjwtHS256() throws {
        let secret = Array(try Fixtures.text("jwt/pyjwt_hs256.secret").utf8)
        let claims = try JWT.verify(try Fixtures.line("jwt/pyjwt_hs256.jwt"), key: .hs256(secret), now: Self.now)
        #expect(claims["sub"] == "hs")
    }

    @Test("vonage-jwt application token verifies with the application's public key")
    func vonage() throws {
        let key = try RSAPublicKey(pem: Fixtures.text("jwt/vonage_public.pem"))
        let claims = try JWT.verify(
            Fixtures.line("jwt/vonage.jwt"), key: .rs256(key), now: Self.now, requiredClaims: ["application_id", "jti"])
        #expect(claims["application_id"] == "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee")
        #expect(claims["sub"] == "alice")
        #expect(claims["acl"]?["paths"]?["/*/users/**"] == .object([:]))
        #expect(UUID4.isValid(claims["jti"]?.stringValue ?? ""))
        // The private key Vonage hands out is PKCS#8 and signs tokens the same key verifies.
        let priv = try RSAPrivateKey(pem: Fixtures.text("jwt/vonage_private.pem"))
        let ours = try JWT.sign(claims: ["application_id": "x", "iat": 1, "exp": 4_102_444_800], key: .rs256(priv))
        _ = try JWT.verify(ours, key: .rs256(key), now: Self.now)
    }

    // MARK: Round trips

    @Test("RS256 sign then verify returns the claims")
    func rs256RoundTrip() throws {
        let claims: [String: JSONValue] = [
            "application_id": "app", "iat": .number(Double(Self.now)), "exp": .number(Double(Self.now + 900)),
            "jti": "abc", "acl": ["paths": ["/*/rtc/**": [:]]], "nested": [1, 2.5, nil, "x"],
        ]
        let token = try JWT.sign(claims: claims, key: .rs256(TestKeys.generated), header: ["kid": "k1"])
        let decoded = try JWT.decode(token)
        #expect(decoded.header == ["alg": "RS256", "typ": "JWT", "kid": "k1"])
        let verified = try JWT.verify(token, key: .rs256(TestKeys.generated.publicKey), now: Self.now, maxLifetime: 86_400)
        #expect(verified == claims)
        // Integral numbers are serialised without a fraction, as other JWT libraries expect.
        let payload = String(decoding: Base64URL.decode(String(token.split(separator: ".")[1]))!, as: UTF8.self)
        #expect(payload.contains("\"exp\":\(Self.now + 900)"))
        #expect(payload.contains("\"acl\":{\"paths\":{\"/*/rtc/**\":{}}}"))
    }

    @Test("HS256 sign then verify, and Encodable claims")
    func hs256RoundTrip() throws {
        struct Claims: Codable { var sub: String; var exp: Int; var iat: Int }
        let token = try JWT.sign(claims: Claims(sub: "u1", exp: Self.now + 60, iat: Self.now), key: .hs256(Self.secret))
        let claims = try JWT.verify(token, key: .hs256(Self.secret), now: Date(timeIntervalSince1970: Double(Self.now)))
        #expect(claims["sub"] == "u1")
        #expect(claims["exp"]?.intValue == Self.now + 60)
        #expect(throws: JWTError.self) { try JWT.sign(claims: [1, 2], key: .hs256(Self.secret)) }
    }

    @Test("header extras cannot override alg")
    func algOverride() throws {
        let token = try JWT.sign(claims: ["exp": 4_102_444_800], key: .hs256(Self.secret), header: ["alg": "none"])
        #expect(try JWT.decode(token).algorithm == "HS256")
    }

    // MARK: Rejections

    /// Builds a token with arbitrary header and claims, signed with HMAC over `secret`.
    static func forge(header: [String: JSONValue], claims: [String: JSONValue], secret: [UInt8], signature: [UInt8]? = nil) throws -> String {
        let h = Base64URL.encode(try JWT.encodeJSON(header))
        let p = Base64URL.encode(try JWT.encodeJSON(claims))
        let sig = signature ?? HMAC.sha256(key: secret, data: Array("\(h).\(p)".utf8))
        return "\(h).\(p).\(Base64URL.encode(sig))"
    }

    @Test("alg none is refused, with or without a signature")
    func algNone() throws {
        for alg: JSONValue in ["none", "None", "NONE"] {
            let token = try Self.forge(header: ["alg": alg], claims: ["exp": 4_102_444_800], secret: [], signature: [])
            #expect(throws: JWTError.unsupportedAlgorithm(alg.stringValue!)) {
                try JWT.verify(token, key: .hs256(Self.secret), now: Self.now)
            }
            #expect(throws: JWTError.unsupportedAlgorithm(alg.stringValue!)) {
                try JWT.verify(token, key: .rs256(TestKeys.generated.publicKey), now: Self.now)
            }
        }
    }

    @Test("HS256 token signed with the RSA public key PEM as secret fails against that RSA key")
    func algConfusion() throws {
        let publicKey = TestKeys.generated.publicKey
        let token = try Self.forge(
            header: ["alg": "HS256", "typ": "JWT"], claims: ["exp": 4_102_444_800], secret: Array(publicKey.pem.utf8))
        #expect(throws: JWTError.unsupportedAlgorithm("HS256")) {
            try JWT.verify(token, key: .rs256(publicKey), now: Self.now)
        }
        // And the reverse: an RS256 token offered to an HMAC verifier.
        let rs = try JWT.sign(claims: ["exp": 4_102_444_800], key: .rs256(TestKeys.generated))
        #expect(throws: JWTError.unsupportedAlgorithm("RS256")) {
            try JWT.verify(rs, key: .hs256(Self.secret), now: Self.now)
        }
    }

    @Test("unknown algorithms and crit headers are refused")
    func unknownAlg() throws {
        let es = try Self.forge(header: ["alg": "ES256"], claims: ["exp": 4_102_444_800], secret: Self.secret)
        #expect(throws: JWTError.unsupportedAlgorithm("ES256")) { try JWT.verify(es, key: .hs256(Self.secret), now: Self.now) }
        let crit = try Self.forge(header: ["alg": "HS256", "crit": ["b64"], "b64": false], claims: ["exp": 4_102_444_800], secret: Self.secret)
        #expect(throws: JWTError.self) { try JWT.verify(crit, key: .hs256(Self.secret), now: Self.now) }
        let noAlg = try Self.forge(header: ["typ": "JWT"], claims: ["exp": 4_102_444_800], secret: Self.secret)
        #expect(throws: JWTError.self) { try JWT.verify(noAlg, key: .hs256(Self.secret), now: Self.now) }
    }

    @Test("wrong key, altered payload or altered signature fails")
    func badSignature() throws {
        let token = try JWT.sign(claims: ["sub": "a", "exp": 4_102_444_800], key: .rs256(TestKeys.generated))
        #expect(throws: JWTError.badSignature) { try JWT.verify(token, key: .rs256(TestKeys.other.publicKey), now: Self.now) }
        let parts = token.split(separator: ".").map(String.init)
        let otherPayload = Base64URL.encode(#"{"sub":"b","exp":4102444800}"#)
        #expect(throws: JWTError.badSignature) {
            try JWT.verify("\(parts[0]).\(otherPayload).\(parts[2])", key: .rs256(TestKeys.generated.publicKey), now: Self.now)
        }
        var sig = Base64URL.decode(parts[2])!
        sig[10] ^= 1
        #expect(throws: JWTError.badSignature) {
            try JWT.verify("\(parts[0]).\(parts[1]).\(Base64URL.encode(sig))", key: .rs256(TestKeys.generated.publicKey), now: Self.now)
        }
        let hs = try JWT.sign(claims: ["exp": 4_102_444_800], key: .hs256(Self.secret))
        #expect(throws: JWTError.badSignature) { try JWT.verify(hs, key: .hs256(Array("other".utf8)), now: Self.now) }
        #expect(throws: JWTError.badSignature) { try JWT.verify(hs + "AAAA", key: .hs256(Self.secret), now: Self.now) }
    }

    @Test("malformed tokens give .malformed", arguments: [
        "", "a", "a.b", "a.b.c.d", "....", "!!.e30.", "e30.!!.", "e30.e30.!!",
        "W10.e30.", "e30.W10.", "e30.bnVsbA.", "e30.eyJ.", "e30.e30 .",
    ])
    func malformed(token: String) {
        #expect {
            try JWT.verify(token, key: .hs256(Self.secret), now: Self.now)
        } throws: { error in
            if case .malformed = error as? JWTError { return true }
            return false
        }
    }

    @Test("oversized tokens are refused before decoding")
    func oversized() {
        let token = String(repeating: "a", count: JWT.maxTokenLength + 1)
        #expect(throws: JWTError.self) { try JWT.decode(token) }
    }

    @Test("exp is required by default and enforced with 60 s leeway")
    func expiry() throws {
        let noExp = try JWT.sign(claims: ["sub": "x"], key: .hs256(Self.secret))
        #expect(throws: JWTError.missingClaim("exp")) { try JWT.verify(noExp, key: .hs256(Self.secret), now: Self.now) }
        _ = try JWT.verify(noExp, key: .hs256(Self.secret), now: Self.now, requireExpiration: false)

        let exp = Self.now
        let token = try JWT.sign(claims: ["exp": .number(Double(exp))], key: .hs256(Self.secret))
        _ = try JWT.verify(token, key: .hs256(Self.secret), now: exp + 59)
        #expect(throws: JWTError.expired) { try JWT.verify(token, key: .hs256(Self.secret), now: exp + 60) }
        #expect(throws: JWTError.expired) { try JWT.verify(token, key: .hs256(Self.secret), now: exp + 1, leeway: 0) }

        let stringExp = try JWT.sign(claims: ["exp": "tomorrow"], key: .hs256(Self.secret))
        #expect(throws: JWTError.malformed("exp is not a number")) {
            try JWT.verify(stringExp, key: .hs256(Self.secret), now: Self.now)
        }
    }

    @Test("nbf and iat in the future beyond 60 s are refused")
    func notYetValid() throws {
        let far = Double(Self.now + 4000)
        let nbf = try JWT.sign(claims: ["nbf": .number(Double(Self.now + 30)), "exp": .number(far)], key: .hs256(Self.secret))
        _ = try JWT.verify(nbf, key: .hs256(Self.secret), now: Self.now)
        #expect(throws: JWTError.notYetValid) { try JWT.verify(nbf, key: .hs256(Self.secret), now: Self.now - 31) }

        let iat = try JWT.sign(claims: ["iat": .number(Double(Self.now + 61)), "exp": .number(far)], key: .hs256(Self.secret))
        #expect(throws: JWTError.notYetValid) { try JWT.verify(iat, key: .hs256(Self.secret), now: Self.now) }
        _ = try JWT.verify(iat, key: .hs256(Self.secret), now: Self.now + 1)
    }

    @Test("max lifetime caps exp - iat")
    func lifetime() throws {
        let day = 86_400.0
        let ok = try JWT.sign(claims: ["iat": .number(Double(Self.now)), "exp": .number(Double(Self.now) + day)], key: .hs256(Self.secret))
        _ = try JWT.verify(ok, key: .hs256(Self.secret), now: Self.now, maxLifetime: day)
        let long = try JWT.sign(claims: ["iat": .number(Double(Self.now)), "exp": .number(Double(Self.now) + day + 1)], key: .hs256(Self.secret))
        #expect(throws: JWTError.lifetimeTooLong) { try JWT.verify(long, key: .hs256(Self.secret), now: Self.now, maxLifetime: day) }
        _ = try JWT.verify(long, key: .hs256(Self.secret), now: Self.now)
        // Without iat the lifetime counts from now.
        let noIat = try JWT.sign(claims: ["exp": .number(Double(Self.now) + 2 * day)], key: .hs256(Self.secret))
        #expect(throws: JWTError.lifetimeTooLong) { try JWT.verify(noIat, key: .hs256(Self.secret), now: Self.now, maxLifetime: day) }
        // A lifetime limit implies exp is required.
        let noExp = try JWT.sign(claims: ["iat": .number(Double(Self.now))], key: .hs256(Self.secret))
        #expect(throws: JWTError.missingClaim("exp")) {
            try JWT.verify(noExp, key: .hs256(Self.secret), now: Self.now, requireExpiration: false, maxLifetime: day)
        }
    }

    @Test("required claims must be present")
    func requiredClaims() throws {
        let token = try JWT.sign(claims: ["exp": 4_102_444_800, "sub": "a"], key: .hs256(Self.secret))
        #expect(throws: JWTError.missingClaim("application_id")) {
            try JWT.verify(token, key: .hs256(Self.secret), now: Self.now, requiredClaims: ["sub", "application_id"])
        }
    }

    @Test("a forged token's claims are not checked before its signature")
    func signatureFirst() throws {
        let expiredForgery = try Self.forge(header: ["alg": "HS256"], claims: ["exp": 1], secret: Array("wrong".utf8))
        #expect(throws: JWTError.badSignature) { try JWT.verify(expiredForgery, key: .hs256(Self.secret), now: Self.now) }
    }
}
