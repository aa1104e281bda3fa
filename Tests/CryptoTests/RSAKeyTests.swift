import Testing
@testable import Crypto

/// One generated key shared by the suites: generation is the slow part.
enum TestKeys {
    static let generated: RSAPrivateKey = {
        do { return try RSAPrivateKey.generate(bits: 2048) } catch { fatalError("key generation failed: \(error)") }
    }()
    static let other: RSAPrivateKey = {
        do { return try RSAPrivateKey.generate(bits: 2048) } catch { fatalError("key generation failed: \(error)") }
    }()
}

@Suite("RSA keys")
struct RSAKeyTests {
    @Test("generated key signs and its public half verifies")
    func signVerify() throws {
        let key = TestKeys.generated
        #expect(key.bits == 2048)
        let message = Array("hello".utf8)
        let signature = try key.sign(sha256: message)
        #expect(signature.count == 256)
        #expect(key.publicKey.verify(signature: signature, sha256: message))
        #expect(!key.publicKey.verify(signature: signature, sha256: Array("hellO".utf8)))
        #expect(!TestKeys.other.publicKey.verify(signature: signature, sha256: message))
        #expect(!key.publicKey.verify(signature: [1, 2, 3], sha256: message))
        #expect(!key.publicKey.verify(signature: [], sha256: message))
    }

    @Test("PKCS#8 PEM export round-trips")
    func pemRoundTrip() throws {
        let key = TestKeys.generated
        let pem = key.pemPKCS8
        #expect(pem.hasPrefix("-----BEGIN PRIVATE KEY-----\n"))
        let reloaded = try RSAPrivateKey(pem: pem)
        #expect(reloaded.publicKey.pem == key.publicKey.pem)
        #expect(key.publicKey.pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        let pub = try RSAPublicKey(pem: key.publicKey.pem)
        #expect(pub.spkiDER == key.publicKey.spkiDER)
    }

    @Test("loads PKCS#8, PKCS#1, SPKI and PKCS#1 public PEMs made by Python")
    func pythonKeys() throws {
        let pkcs8 = try RSAPrivateKey(pem: Fixtures.text("jwt/pyjwt_private_pkcs8.pem"))
        let pkcs1 = try RSAPrivateKey(pem: Fixtures.text("jwt/pyjwt_private_pkcs1.pem"))
        let spki = try RSAPublicKey(pem: Fixtures.text("jwt/pyjwt_public.pem"))
        let pkcs1Public = try RSAPublicKey(pem: Fixtures.text("jwt/pyjwt_public_pkcs1.pem"))
        #expect(pkcs8.publicKey.spkiDER == spki.spkiDER)
        #expect(pkcs1.publicKey.spkiDER == spki.spkiDER)
        #expect(pkcs1Public.spkiDER == spki.spkiDER)
        #expect(pkcs1.pemPKCS8 == pkcs8.pemPKCS8)
    }

    @Test("PEM with surrounding text and CRLF line ends still loads")
    func tolerantPEM() throws {
        let pem = try Fixtures.text("jwt/pyjwt_public.pem").replacingOccurrences(of: "\n", with: "\r\n")
        _ = try RSAPublicKey(pem: "key follows:\r\n" + pem + "trailer")
    }

    @Test("garbage, wrong labels and truncated keys are refused with a typed error")
    func badPEM() throws {
        #expect(throws: RSAKeyError.self) { try RSAPublicKey(pem: "") }
        #expect(throws: RSAKeyError.self) { try RSAPublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n") }
        let priv = try Fixtures.text("jwt/pyjwt_private_pkcs8.pem")
        #expect(throws: RSAKeyError.self) { try RSAPublicKey(pem: priv) }
        let pub = try Fixtures.text("jwt/pyjwt_public.pem")
        #expect(throws: RSAKeyError.self) { try RSAPrivateKey(pem: pub) }
        let truncated = String(priv.prefix(200)) + "\n-----END PRIVATE KEY-----\n"
        #expect(throws: RSAKeyError.self) { try RSAPrivateKey(pem: truncated) }
        #expect(throws: RSAKeyError.keyTooSmall(bits: 1024)) { try RSAPrivateKey.generate(bits: 1024) }
    }

    @Test("one key signs and verifies from many tasks at once")
    func concurrentUse() async throws {
        let key = TestKeys.generated
        let pub = key.publicKey
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for i in 0..<16 {
                group.addTask {
                    let message = Array("message \(i)".utf8)
                    let signature = try key.sign(sha256: message)
                    return pub.verify(signature: signature, sha256: message)
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }

    @Test("public key cache parses once and re-parses a rotated key")
    func cache() throws {
        let cache = PublicKeyCache(capacity: 2)
        let pemA = TestKeys.generated.publicKey.pem
        let pemB = TestKeys.other.publicKey.pem
        let a1 = try cache.publicKey(id: "app", pem: pemA)
        let a2 = try cache.publicKey(id: "app", pem: pemA)
        #expect(a1 === a2)
        let b = try cache.publicKey(id: "app", pem: pemB)
        #expect(b !== a1)
        #expect(b.pem == pemB)
        _ = try cache.publicKey(pem: pemA)
        _ = try cache.publicKey(id: "third", pem: pemA)
        #expect(cache.count == 2)
        cache.remove(id: "third")
        #expect(cache.count == 1)
        #expect(throws: RSAKeyError.self) { try cache.publicKey(id: "bad", pem: "nope") }
    }
}
