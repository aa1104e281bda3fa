import Runtime
import Testing
import Wire
@testable import Telephony

@Suite("Digest authentication (RFC 2617, RFC 7616, RFC 8760)")
struct DigestTests {
    @Test("RFC 2617 §3.5 example")
    func rfc2617() {
        let r = DigestCredentials.compute(algorithm: .md5, username: "Mufasa", realm: "testrealm@host.com",
                                          password: "Circle Of Life", method: "GET", uri: "/dir/index.html",
                                          nonce: "dcd98b7102dd2f0e8b11d0f600bfb0c093", nc: "00000001", cnonce: "0a4f113b", qop: "auth")
        #expect(r == "6629fae49393a05397450978507c4ef1")
    }

    @Test("RFC 7616 §3.9.1 examples, MD5 and SHA-256", arguments: [
        (DigestAlgorithm.md5, "8ca523f5e9506fed4657c9700eebdbec"),
        (DigestAlgorithm.sha256, "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
    ])
    func rfc7616(algorithm: DigestAlgorithm, expected: String) {
        let r = DigestCredentials.compute(algorithm: algorithm, username: "Mufasa", realm: "http-auth@example.org",
                                          password: "Circle of Life", method: "GET", uri: "/dir/index.html",
                                          nonce: "7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", nc: "00000001",
                                          cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", qop: "auth")
        #expect(r == expected)
    }

    @Test("a trunk's challenge parses and our answer round-trips")
    func clientAnswer() throws {
        let c = try DigestChallenge.parse(#"Digest realm="sip.example.net", nonce="abc,123", opaque="xyz", algorithm=SHA-256, qop="auth,auth-int""#)
        #expect(c.realm == "sip.example.net" && c.nonce == "abc,123" && c.algorithm == .sha256 && c.qop == ["auth", "auth-int"])
        let a = try DigestCredentials.answer(c, username: "trunk", password: "pw", method: .invite, uri: "sip:+15551234@sip.example.net",
                                             cnonce: "c0ffee")
        #expect(a.qop == "auth" && a.nonceCount == "00000001" && a.opaque == "xyz")
        #expect(try DigestCredentials.parse(a.description) == a)
        #expect(throws: DigestError.unsupportedQop("auth-int")) {
            try DigestCredentials.answer(try DigestChallenge.parse(#"Digest realm="r", nonce="n", qop="auth-int""#),
                                         username: "u", password: "p", method: .invite, uri: "sip:x", cnonce: "c")
        }
        #expect(throws: DigestError.notDigest) { try DigestChallenge.parse("Basic realm=\"x\"") }
    }

    @Test("server: stateless nonces verify, expire to stale, and reject forgeries and wrong passwords")
    func server() throws {
        let verifier = DigestVerifier(realm: "switchboard", secret: Array("k".utf8), nonceLifetime: .seconds(60))
        let now = Fixture.at(1_000_000)
        let challenge = verifier.challenge(now: now)
        let parsed = try DigestChallenge.parse(challenge.description)
        let creds = try DigestCredentials.answer(parsed, username: "1001", password: "secret", method: .register,
                                                 uri: "sip:127.0.0.1", cnonce: "n1")
        let lookup: (String) -> String? = { $0 == "1001" ? "secret" : nil }
        #expect(verifier.verify(creds, method: .register, now: now, password: lookup) == .authorized(username: "1001"))
        #expect(verifier.verify(creds, method: .register, now: Fixture.at(1_000_000 + 61_000), password: lookup) == .stale)
        #expect(verifier.verify(creds, method: .invite, now: now, password: lookup) == .rejected)
        #expect(verifier.verify(creds, method: .register, now: now, password: { _ in "other" }) == .rejected)
        var forged = creds
        forged.nonce = "999." + String(repeating: "0", count: 64)
        #expect(verifier.verify(forged, method: .register, now: now, password: lookup) == .rejected)
        let other = DigestVerifier(realm: "switchboard", secret: Array("other".utf8))
        #expect(other.verify(creds, method: .register, now: now, password: lookup) == .rejected)
    }
}
