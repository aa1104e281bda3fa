import Crypto
import Foundation
import Platform
import Testing
import Wire
@testable import API

@Suite("Authentication")
struct AuthenticationTests {
    @Test("account Basic auth opens the Applications API; a wrong secret is 401 with a Basic challenge")
    func basicAuth() async throws {
        let p = try TestPlatform()
        #expect(await p.send(.GET, "/v2/applications", auth: p.basic).status == 200)
        let bad = await p.send(.GET, "/v2/applications", auth: TestPlatform.basic(p.account.apiKey, "wrong"))
        #expect(bad.status == 401)
        #expect(bad.header("WWW-Authenticate")?.hasPrefix("Basic") == true)
        let none = await p.send(.GET, "/v2/applications")
        #expect(none.status == 401)
        #expect(none.header("WWW-Authenticate") != nil)
    }

    @Test("the previous secret works for 24 hours after a rotation, then stops")
    func rotationGrace() async throws {
        let p = try TestPlatform()
        let old = p.account.apiSecret
        let rotated = try p.core.accounts.rotateSecret(apiKey: p.account.apiKey)
        #expect(rotated.apiSecret != old)
        for secret in [old, rotated.apiSecret] {
            #expect(await p.send(.GET, "/v2/applications", auth: TestPlatform.basic(p.account.apiKey, secret)).status == 200)
        }
        p.clock.advance(Accounts.rotationGrace - 1)
        #expect(await p.send(.GET, "/v2/applications", auth: TestPlatform.basic(p.account.apiKey, old)).status == 200)
        p.clock.advance(2)
        #expect(await p.send(.GET, "/v2/applications", auth: TestPlatform.basic(p.account.apiKey, old)).status == 401)
        #expect(await p.send(.GET, "/v2/applications", auth: TestPlatform.basic(p.account.apiKey, rotated.apiSecret)).status == 200)
    }

    @Test("the account file is rewritten on rotation, readable by its owner only")
    func accountFile() throws {
        let p = try TestPlatform()
        let rotated = try p.core.accounts.rotateSecret(apiKey: p.account.apiKey)
        let data = try #require(FileManager.default.contents(atPath: p.core.accounts.accountFile))
        let obj = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(obj["api_secret"] as? String == rotated.apiSecret)
        #expect(obj["previous_secret"] as? String == p.account.apiSecret)
        let attributes = try FileManager.default.attributesOfItem(atPath: p.core.accounts.accountFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
    }

    @Test("token times: 60 s of skew is tolerated, more is not", arguments: [
        (iatOffset: -950.0, lifetime: 900.0, status: 200),   // expired 50 s ago: inside the skew
        (iatOffset: -1000.0, lifetime: 900.0, status: 401),  // expired 100 s ago
        (iatOffset: 50.0, lifetime: 900.0, status: 200),     // issued 50 s in the future
        (iatOffset: 120.0, lifetime: 900.0, status: 401),    // issued 2 min in the future
        (iatOffset: 0.0, lifetime: 86_400.0, status: 200),   // exactly 24 h
        (iatOffset: 0.0, lifetime: 86_401.0, status: 401),   // longer than 24 h
    ])
    func tokenTimes(iatOffset: Double, lifetime: Double, status: Int) async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        let t = p.token(app: id, key: key, lifetime: lifetime, iatOffset: iatOffset)
        #expect(await p.send(.GET, "/v1/users", auth: bearer(t)).status == status)
    }

    @Test("a token expires while the clock moves on")
    func expiryWithClock() async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        let t = p.token(app: id, key: key, lifetime: 300)
        #expect(await p.send(.GET, "/v1/users", auth: bearer(t)).status == 200)
        p.clock.advance(361)
        let r = await p.send(.GET, "/v1/users", auth: bearer(t))
        #expect(r.status == 401)
        #expect(r.json["detail"]?.stringValue == "The token has expired.")
    }

    @Test("nbf in the future is refused")
    func notBefore() async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        let nbf = p.clock.now().timeIntervalSince1970 + 600
        #expect(await p.send(.GET, "/v1/users", auth: bearer(p.token(app: id, key: key, extra: ["nbf": .number(nbf)]))).status == 401)
        p.clock.advance(600)
        #expect(await p.send(.GET, "/v1/users", auth: bearer(p.token(app: id, key: key, iatOffset: -600, extra: ["nbf": .number(nbf)]))).status == 200)
    }

    @Test("tokens signed by another application's key, or naming no application, look the same as bad signatures")
    func wrongApplication() async throws {
        let p = try TestPlatform()
        let (a, keyA) = try await p.createApplication("a")
        let (b, _) = try await p.createApplication("b")
        let forged = await p.send(.GET, "/v1/users", auth: bearer(p.token(app: b, key: keyA)))
        let unknown = await p.send(.GET, "/v1/users", auth: bearer(p.token(app: UUID4.generate(), key: keyA)))
        var parts = p.token(app: a, key: keyA).split(separator: ".").map(String.init)
        parts[2] = String(parts[2].reversed())
        let badSignature = await p.send(.GET, "/v1/users", auth: bearer(parts.joined(separator: ".")))
        for r in [forged, unknown, badSignature] {
            #expect(r.status == 401)
            #expect(r.text == forged.text)
        }
        #expect(forged.json["detail"] == unknown.json["detail"])
        #expect(forged.json["detail"] == badSignature.json["detail"])
    }

    @Test("alg none and HS256 signed with the public key are refused")
    func algorithmConfusion() async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        let now = p.clock.now().timeIntervalSince1970
        let claims: [String: JSONValue] = ["application_id": .string(id), "iat": .number(now), "exp": .number(now + 300)]
        let hs = try JWT.sign(claims: claims, key: .hs256(Array(key.publicKey.pem.utf8)))
        #expect(await p.send(.GET, "/v1/users", auth: bearer(hs)).status == 401)
        let header = Base64URL.encode(#"{"alg":"none","typ":"JWT"}"#)
        let payload = Base64URL.encode(Array(try JSONEncoder().encode(JSONValue.object(claims))))
        #expect(await p.send(.GET, "/v1/users", auth: bearer(header + "." + payload + ".")).status == 401)
    }

    @Test("a user token needs an existing user and an ACL covering the path")
    func userTokens() async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        let created = await p.send(.POST, "/v1/users", auth: bearer(p.token(app: id, key: key)), json: ["name": "alice"])
        let alice = try #require(created.json["id"]?.stringValue)
        let client = p.token(app: id, key: key, sub: "alice", acl: ACL.clientPaths)
        #expect(await p.send(.GET, "/v1/users/\(alice)", auth: bearer(client)).status == 200)
        #expect(await p.send(.GET, "/v1/users/\(alice)", auth: bearer(p.token(app: id, key: key, sub: "bob", acl: ACL.clientPaths))).status == 401)
        let narrow = p.token(app: id, key: key, sub: "alice", acl: ["/*/conversations/**"])
        #expect(await p.send(.GET, "/v1/users/\(alice)", auth: bearer(narrow)).status == 403)
        // Users cannot create or delete users, and cannot use account APIs.
        #expect(await p.send(.POST, "/v1/users", auth: bearer(client), json: ["name": "eve"]).status == 403)
        #expect(await p.send(.DELETE, "/v1/users/\(alice)", auth: bearer(client)).status == 403)
        #expect(await p.send(.GET, "/v2/applications", auth: bearer(client)).status == 403)
        // The user goes away: its tokens stop working.
        #expect(await p.send(.DELETE, "/v1/users/\(alice)", auth: bearer(p.token(app: id, key: key))).status == 204)
        #expect(await p.send(.GET, "/v1/users", auth: bearer(client)).status == 401)
    }

    @Test("a token whose ACL is over the limits is refused at authentication, with the reason")
    func oversizedACL() async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        _ = await p.send(.POST, "/v1/users", auth: bearer(p.token(app: id, key: key)), json: ["name": "alice"])
        let stars = "/" + Array(repeating: "**", count: 60).joined(separator: "/") + "/x"
        let r = await p.send(.GET, "/v1/users", auth: bearer(p.token(app: id, key: key, sub: "alice", acl: [stars])))
        #expect(r.status == 401)
        #expect(r.json["detail"]?.stringValue?.contains("more than 32 segments") == true)
    }

    @Test("deleting an application invalidates its tokens")
    func deletedApplication() async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        let t = p.token(app: id, key: key)
        #expect(await p.send(.GET, "/v1/users", auth: bearer(t)).status == 200)
        #expect(await p.send(.DELETE, "/v2/applications/\(id)", auth: p.basic).status == 204)
        #expect(await p.send(.GET, "/v1/users", auth: bearer(t)).status == 401)
    }

    @Test("malformed Authorization headers are 401, never 500", arguments: [
        "Basic", "Basic !!!", "Basic " + Base64.encode("nocolon"), "Bearer", "Bearer a.b", "Bearer ...", "Digest x", "Bearer " + String(repeating: "a", count: 70_000),
    ])
    func malformed(header: String) async throws {
        let p = try TestPlatform()
        #expect(await p.send(.GET, "/v2/applications", auth: header).status == 401)
    }
}

@Suite("ACL paths")
struct ACLTests {
    @Test("path patterns", arguments: [
        ("/*/users/**", "/v1/users", true),
        ("/*/users/**", "/v1/users/USR-1", true),
        ("/*/users/**", "/v1/users/USR-1/conversations", true),
        ("/*/users/**", "/v1/conversations", false),
        ("/*/users/**", "/users", false),
        ("/*/users", "/v1/users/USR-1", false),
        ("/v1/*/x", "/v1/users/x", true),
        ("/**", "/anything/at/all", true),
        ("/*/conversations/**", "/v0.1/conversations/CON-1/members", true),
        ("/*/sessions/**", "/v1/users", false),
    ])
    func matches(pattern: String, path: String, allowed: Bool) {
        #expect(ACL(paths: [pattern]).allows(path: path) == allowed)
    }

    @Test("matching costs path × pattern segments, however many ** a pattern holds")
    func doubleStarsAreLinear() {
        // A backtracking matcher takes seconds (exponential in the ** count) on each of these.
        let stars = "/" + Array(repeating: "**", count: 60).joined(separator: "/") + "/x"
        let path = "/" + Array(repeating: "a", count: 60).joined(separator: "/")
        #expect(!ACL(paths: [stars]).allows(path: path))
        #expect(ACL(paths: [stars]).allows(path: path + "/x"))
        let mixed = "/" + Array(repeating: "**/*", count: 30).joined(separator: "/") + "/z"
        #expect(!ACL(paths: [mixed]).allows(path: path))
        #expect(ACL(paths: ["/**/users/**/x"]).allows(path: "/v1/a/users/b/c/x"))
        #expect(!ACL(paths: ["/**/users/**/x"]).allows(path: "/v1/a/users/b/c/y"))
    }

    @Test("ACLs over the limits are reported", arguments: [
        (Array(repeating: "/*/users/**", count: 65), true),
        ([String(repeating: "/a", count: 33)], true),
        (["/" + String(repeating: "a", count: 520)], true),
        (ACL.clientPaths, false),
    ])
    func limits(paths: [String], over: Bool) {
        #expect((ACL(paths: paths).limitViolation != nil) == over)
    }

    @Test("the client path set allows users and conversations but not applications of the account API")
    func clientSet() {
        let acl = ACL(paths: ACL.clientPaths)
        #expect(acl.allows(path: "/v1/users/USR-1"))
        #expect(acl.allows(path: "/v1/conversations/CON-1/events"))
        #expect(!acl.allows(path: "/account/numbers"))
        #expect(!acl.allows(path: "/number/buy"))
    }
}
