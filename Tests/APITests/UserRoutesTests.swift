import Crypto
import Foundation
import Platform
import Testing
import Wire
@testable import API

@Suite("Users API")
struct UserRoutesTests {
    @Test("create, get by id or name, patch, delete")
    func lifecycle() async throws {
        let p = try TestPlatform()
        let (app, key) = try await p.createApplication()
        let auth = bearer(p.token(app: app, key: key))
        let created = await p.send(.POST, "/v1/users", auth: auth, json: [
            "name": "alice", "display_name": "Alice", "image_url": "https://example.com/a.png",
            "properties": ["custom_data": ["team": "blue"]],
        ])
        #expect(created.status == 201)
        let id = try #require(created.json["id"]?.stringValue)
        #expect(id.hasPrefix("USR-") && UUID4.isValid(String(id.dropFirst(4))))
        #expect(created.json["properties"]?["custom_data"]?["team"] == "blue")
        #expect(created.json["_links"]?["self"]?["href"]?.stringValue == "https://api.switchboard.test/v1/users/\(id)")
        #expect(await p.send(.GET, "/v1/users/alice", auth: auth).json["id"]?.stringValue == id)

        let patched = await p.send(.PATCH, "/v1/users/\(id)", auth: auth, json: ["display_name": "Alice B", "image_url": nil])
        #expect(patched.status == 200)
        #expect(patched.json["display_name"] == "Alice B")
        #expect(patched.json["image_url"] == .null)
        #expect(patched.json["name"] == "alice")

        #expect(await p.send(.DELETE, "/v1/users/\(id)", auth: auth).status == 204)
        #expect(await p.send(.GET, "/v1/users/\(id)", auth: auth).status == 404)
    }

    @Test("names are unique per application, not across applications")
    func uniqueNames() async throws {
        let p = try TestPlatform()
        let (a, keyA) = try await p.createApplication("a")
        let (b, keyB) = try await p.createApplication("b")
        #expect(await p.send(.POST, "/v1/users", auth: bearer(p.token(app: a, key: keyA)), json: ["name": "alice"]).status == 201)
        #expect(await p.send(.POST, "/v1/users", auth: bearer(p.token(app: a, key: keyA)), json: ["name": "alice"]).status == 409)
        #expect(await p.send(.POST, "/v1/users", auth: bearer(p.token(app: b, key: keyB)), json: ["name": "alice"]).status == 201)
        // And one application cannot see the other's users.
        let inA = await p.send(.GET, "/v1/users/alice", auth: bearer(p.token(app: a, key: keyA)))
        let inB = await p.send(.GET, "/v1/users/alice", auth: bearer(p.token(app: b, key: keyB)))
        #expect(inA.json["id"] != inB.json["id"])
        let idA = try #require(inA.json["id"]?.stringValue)
        #expect(await p.send(.GET, "/v1/users/\(idA)", auth: bearer(p.token(app: b, key: keyB))).status == 404)
        #expect(await p.send(.DELETE, "/v1/users/\(idA)", auth: bearer(p.token(app: b, key: keyB))).status == 404)
    }

    @Test("list walks every user once with cursors, in both orders")
    func cursorPaging() async throws {
        let p = try TestPlatform()
        let (app, key) = try await p.createApplication()
        let auth = bearer(p.token(app: app, key: key))
        var names: [String] = []
        for i in 0..<7 {
            let n = "user\(i)"
            names.append(n)
            _ = await p.send(.POST, "/v1/users", auth: auth, json: ["name": .string(n)])
        }
        for order in ["asc", "desc"] {
            var seen: [String] = []
            var target: String? = "/v1/users?page_size=3&order=\(order)"
            while let t = target {
                let r = await p.send(.GET, t, auth: auth)
                #expect(r.status == 200)
                #expect(r.json["page_size"] == 3)
                seen += r.json["_embedded"]?["users"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
                target = r.json["_links"]?["next"]?["href"]?.stringValue.map { $0.replacingOccurrences(of: "https://api.switchboard.test", with: "") }
            }
            #expect(seen == (order == "asc" ? names : names.reversed()))
        }
        #expect(await p.send(.GET, "/v1/users?page_size=0", auth: auth).status == 400)
        #expect(await p.send(.GET, "/v1/users?cursor=bogus", auth: auth).status == 400)
        #expect(await p.send(.GET, "/v1/users?name=user3", auth: auth).json["_embedded"]?["users"]?.arrayValue?.count == 1)
    }

    @Test("legacy POST /v0.1/users answers id and href")
    func legacy() async throws {
        let p = try TestPlatform()
        let (app, key) = try await p.createApplication()
        let r = await p.send(.POST, "/v0.1/users", auth: bearer(p.token(app: app, key: key)), json: ["name": "old", "display_name": "Old"])
        #expect(r.status == 201)
        let id = try #require(r.json["id"]?.stringValue)
        #expect(r.json["href"]?.stringValue == "https://api.switchboard.test/v0.1/users/\(id)")
    }

    @Test("a user token may change only its own user")
    func selfOnly() async throws {
        let p = try TestPlatform()
        let (app, key) = try await p.createApplication()
        let auth = bearer(p.token(app: app, key: key))
        let alice = try #require(await p.send(.POST, "/v1/users", auth: auth, json: ["name": "alice"]).json["id"]?.stringValue)
        let bob = try #require(await p.send(.POST, "/v1/users", auth: auth, json: ["name": "bob"]).json["id"]?.stringValue)
        let asAlice = bearer(p.token(app: app, key: key, sub: "alice", acl: ACL.clientPaths))
        #expect(await p.send(.PATCH, "/v1/users/\(alice)", auth: asAlice, json: ["display_name": "A"]).status == 200)
        #expect(await p.send(.PATCH, "/v1/users/\(bob)", auth: asAlice, json: ["display_name": "B"]).status == 403)
    }
}

@Suite("Numbers API")
struct NumberRoutesTests {
    @Test("buy, link, list, unlink and cancel with form bodies and Basic auth")
    func lifecycle() async throws {
        let p = try TestPlatform()
        let (app, _) = try await p.createApplication()
        let bought = await p.send(.POST, "/number/buy", auth: p.basic, form: "country=us&msisdn=%2B14155550100")
        #expect(bought.status == 200)
        #expect(bought.json["error-code"] == "200")
        #expect(await p.send(.POST, "/number/buy", auth: p.basic, form: "country=US&msisdn=14155550100").status == 409)
        #expect(await p.send(.POST, "/number/update", auth: p.basic, form: "country=US&msisdn=14155550100&app_id=\(app)").status == 200)
        let listed = await p.send(.GET, "/account/numbers", auth: p.basic)
        #expect(listed.json["count"] == 1)
        let n = try #require(listed.json["numbers"]?[0])
        #expect(n["msisdn"] == "14155550100")
        #expect(n["country"] == "US")
        #expect(n["app_id"]?.stringValue == app)
        #expect(await p.send(.GET, "/account/numbers?application_id=\(UUID4.generate())", auth: p.basic).json["count"] == 0)
        #expect(await p.send(.POST, "/number/update", auth: p.basic, form: "msisdn=14155550100&app_id=").status == 200)
        #expect(await p.send(.GET, "/account/numbers", auth: p.basic).json["numbers"]?[0]?["app_id"] == nil)
        #expect(await p.send(.POST, "/number/cancel", auth: p.basic, form: "msisdn=14155550100").status == 200)
        #expect(await p.send(.GET, "/account/numbers", auth: p.basic).json["count"] == 0)
        #expect(await p.send(.POST, "/number/cancel", auth: p.basic, form: "msisdn=14155550100").status == 404)
    }

    @Test("api_key and api_secret parameters and JSON bodies work as in the Vonage API")
    func parameters() async throws {
        let p = try TestPlatform()
        let q = "api_key=\(p.account.apiKey)&api_secret=\(p.account.apiSecret)"
        #expect(await p.send(.POST, "/number/buy?\(q)", json: ["country": "GB", "msisdn": 447700900000]).status == 200)
        #expect(await p.send(.GET, "/account/numbers?\(q)").json["count"] == 1)
        #expect(await p.send(.GET, "/account/numbers?api_key=\(p.account.apiKey)&api_secret=nope").status == 401)
    }

    @Test("linking to an unknown application or a malformed number is refused", arguments: [
        ("msisdn=14155550100&app_id=00000000-0000-4000-8000-000000000000", 404),
        ("msisdn=12ab&country=US", 400),
        ("country=US", 400),
    ])
    func refused(form: String, status: Int) async throws {
        let p = try TestPlatform()
        _ = await p.send(.POST, "/number/buy", auth: p.basic, form: "country=US&msisdn=14155550100")
        let route = form.contains("app_id") ? "/number/update" : "/number/buy"
        #expect(await p.send(.POST, route, auth: p.basic, form: form).status == status)
    }
}
