import Crypto
import Foundation
import Platform
import Testing
import Wire
@testable import API

@Suite("SIP trunk and device routes")
struct SIPRoutesTests {
    @Test("trunks: create, list, get by id or name, patch, delete; the password never comes back")
    func lifecycle() async throws {
        let p = try TestPlatform()
        let created = await p.send(.POST, "/v1/sip/trunks", auth: p.basic, json: [
            "name": "carrier", "host": "192.0.2.10", "port": 5080, "transport": "tcp", "username": "acct", "password": "s3cret",
            "register": true, "allow": ["198.51.100.0/24", "192.0.2.11"]])
        #expect(created.status == 201, "\(created.text)")
        let id = try #require(created.json["id"]?.stringValue)
        #expect(created.json["password"] == nil)
        #expect(created.json["has_password"] == true)
        #expect(created.json["registration"]?["state"] == "pending")
        #expect(created.json["status"] == "unknown")
        let listed = await p.send(.GET, "/v1/sip/trunks", auth: p.basic)
        #expect(listed.json["count"] == 1)
        #expect(await p.send(.GET, "/v1/sip/trunks/carrier", auth: p.basic).json["id"]?.stringValue == id)
        let patched = await p.send(.PATCH, "/v1/sip/trunks/\(id)", auth: p.basic, json: ["port": 5090, "register": false, "password": .null])
        #expect(patched.status == 200)
        #expect(patched.json["port"] == 5090 && patched.json["has_password"] == false)
        #expect(try p.core.sipTrunks.get(id: id, apiKey: p.account.apiKey).password == nil)
        #expect(await p.send(.DELETE, "/v1/sip/trunks/\(id)", auth: p.basic).status == 204)
        #expect(await p.send(.GET, "/v1/sip/trunks/\(id)", auth: p.basic).status == 404)
    }

    @Test("bad trunks are 400 with the reason", arguments: [
        JSONValue.object(["host": "sip.example.com"]), ["host": "192.0.2.1", "transport": "sctp"], ["host": "192.0.2.1", "port": 0],
        ["host": "192.0.2.1", "allow": ["10.0.0.0/33"]], ["host": "192.0.2.1", "allow": "10.0.0.0/8"],
        ["host": "192.0.2.1", "register": true], ["host": "192.0.2.1", "unknown": 1], ["port": 5060],
    ])
    func invalid(body: JSONValue) async throws {
        let p = try TestPlatform()
        #expect(await p.send(.POST, "/v1/sip/trunks", auth: p.basic, json: body).status == 400)
        #expect(try p.core.sipTrunks.list(apiKey: p.account.apiKey).isEmpty)
    }

    @Test("account credentials are required; a JWT is not enough")
    func auth() async throws {
        let p = try TestPlatform()
        #expect(await p.send(.GET, "/v1/sip/trunks").status == 401)
        #expect(await p.send(.GET, "/v1/sip/trunks", auth: TestPlatform.basic(p.account.apiKey, "wrong")).status == 401)
        let (app, key) = try await p.createApplication()
        #expect(await p.send(.GET, "/v1/sip/trunks", auth: "Bearer " + p.token(app: app, key: key)).status == 403)
    }

    @Test("numbers go on a trunk at purchase or later; deleting the trunk takes them off")
    func numbers() async throws {
        let p = try TestPlatform()
        let id = try #require(await p.send(.POST, "/v1/sip/trunks", auth: p.basic, json: ["name": "t", "host": "192.0.2.1"]).json["id"]?.stringValue)
        #expect(await p.send(.POST, "/number/buy", auth: p.basic, form: "country=US&msisdn=14155550100&trunk_id=t").status == 200)
        #expect(await p.send(.POST, "/number/buy", auth: p.basic, form: "country=US&msisdn=14155550101").status == 200)
        #expect(await p.send(.POST, "/number/update", auth: p.basic, form: "msisdn=14155550101&trunk_id=\(id)").status == 200)
        #expect(await p.send(.POST, "/number/update", auth: p.basic, form: "msisdn=14155550101&trunk_id=nope").status == 404)
        let listed = await p.send(.GET, "/account/numbers", auth: p.basic)
        #expect(listed.json["numbers"]?[0]?["trunk_id"]?.stringValue == id)
        #expect(listed.json["numbers"]?[1]?["trunk_id"]?.stringValue == id)
        _ = await p.send(.DELETE, "/v1/sip/trunks/t", auth: p.basic)
        #expect(try p.core.numbers.get(msisdn: "14155550100", apiKey: p.account.apiKey).trunkID == nil)
    }

    @Test("a device password is stored only as the digest HA1 of user:application:password")
    func devicePassword() async throws {
        let p = try TestPlatform()
        let (app, key) = try await p.createApplication()
        let user = await p.send(.POST, "/v1/users", auth: "Bearer " + p.token(app: app, key: key), json: ["name": "alice"])
        #expect(user.status == 201)
        #expect(await p.send(.PUT, "/v1/sip/devices/\(app)/alice", auth: p.basic, json: ["password": "short"]).status == 400)
        #expect(await p.send(.PUT, "/v1/sip/devices/\(app)/alice", auth: p.basic, json: ["password": "correct-horse"]).status == 204)
        #expect(await p.send(.PUT, "/v1/sip/devices/\(app)/bob", auth: p.basic, json: ["password": "correct-horse"]).status == 404)
        let ha1 = p.core.sipCredentials.ha1(realm: app, username: "alice")
        #expect(ha1 == Hex.encode(MD5.hash("alice:\(app.lowercased()):correct-horse")))
        let stored = try p.core.db.query("SELECT * FROM sip_credentials", [])
        #expect(stored.allSatisfy { ($0.string("ha1") ?? "") != "correct-horse" })
    }
}
