import Crypto
import Foundation
import Platform
import Testing
import Wire
@testable import API

@Suite("Applications API")
struct ApplicationRoutesTests {
    static let voice: JSONValue = ["voice": ["webhooks": [
        "answer_url": ["address": "https://example.com/answer", "http_method": "GET", "connect_timeout": 500],
        "event_url": ["address": "https://example.com/event", "http_method": "POST", "socket_timeout": 3000],
    ], "signed_callbacks": true], "rtc": ["webhooks": ["event_url": ["address": "https://example.com/rtc"]]], "video": [:]]

    @Test("create answers 201 with a fresh RSA-2048 key pair; the private key is never shown again")
    func create() async throws {
        let p = try TestPlatform()
        let r = await p.send(.POST, "/v2/applications", auth: p.basic, json: ["name": "demo", "capabilities": Self.voice])
        #expect(r.status == 201)
        let id = try #require(r.json["id"]?.stringValue)
        #expect(UUID4.isValid(id))
        let pem = try #require(r.json["keys"]?["private_key"]?.stringValue)
        let key = try RSAPrivateKey(pem: pem)
        #expect(key.bits == 2048)
        #expect(r.json["keys"]?["public_key"]?.stringValue == key.publicKey.pem)
        #expect(r.json["capabilities"]?["voice"]?["webhooks"]?["answer_url"]?["connect_timeout"] == 500)

        let got = await p.send(.GET, "/v2/applications/\(id)", auth: p.basic)
        #expect(got.status == 200)
        #expect(got.json["keys"]?["private_key"] == nil)
        #expect(!got.text.contains("PRIVATE KEY"))
        let listed = await p.send(.GET, "/v2/applications", auth: p.basic)
        #expect(!listed.text.contains("PRIVATE KEY"))
        // Nor is it stored.
        for file in ["switchboard.db", "switchboard.db-wal"] {
            let bytes = FileManager.default.contents(atPath: p.directory + "/" + file) ?? Data()
            #expect(bytes.range(of: Data("PRIVATE KEY".utf8)) == nil)
        }
        let app = try #require(try p.core.applications.get(id: id))
        #expect(app.signedCallbacks)
        #expect(app.voiceAnswer?.connectionTimeout == 500)
        #expect(app.hasVideo)
    }

    @Test("a given public key is kept and no private key is returned")
    func givenPublicKey() async throws {
        let p = try TestPlatform()
        let key = try RSAPrivateKey.generate()
        let r = await p.send(.POST, "/v2/applications", auth: p.basic, json: ["name": "byo", "keys": ["public_key": .string(key.publicKey.pem)]])
        #expect(r.status == 201)
        #expect(r.json["keys"]?["private_key"] == nil)
        #expect(r.json["keys"]?["public_key"]?.stringValue == key.publicKey.pem)
    }

    @Test("invalid bodies are 400 with a reason", arguments: [
        #"{"capabilities": {}}"#,
        #"{"name": ""}"#,
        #"{"name": "x", "capabilities": {"voice": {"webhooks": {"answer_url": {"address": "ftp://x"}}}}}"#,
        #"{"name": "x", "capabilities": {"voice": {"webhooks": {"answer_url": {"address": "https://x", "http_method": "PUT"}}}}}"#,
        #"{"name": "x", "capabilities": {"fax": {}}}"#,
        #"{"name": "x", "keys": {"public_key": "not a key"}}"#,
        #"[1, 2]"#,
    ])
    func invalid(body: String) async throws {
        let p = try TestPlatform()
        let json = try JSONDecoder().decode(JSONValue.self, from: Data(body.utf8))
        let r = await p.send(.POST, "/v2/applications", auth: p.basic, json: json)
        #expect(r.status == 400)
        #expect(r.json["detail"]?.stringValue?.isEmpty == false)
    }

    @Test("list pages through applications in creation order")
    func paging() async throws {
        let p = try TestPlatform()
        var ids: [String] = []
        for i in 0..<5 { ids.append(try await p.createApplication("app\(i)").id) }
        let first = await p.send(.GET, "/v2/applications?page_size=2", auth: p.basic)
        #expect(first.json["total_items"] == 5)
        #expect(first.json["total_pages"] == 3)
        #expect(first.json["_links"]?["next"]?["href"]?.stringValue == "/v2/applications?page_size=2&page=2")
        var seen: [String] = []
        for page in 1...3 {
            let r = await p.send(.GET, "/v2/applications?page_size=2&page=\(page)", auth: p.basic)
            seen += r.json["_embedded"]?["applications"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        }
        #expect(seen == ids)
        #expect(await p.send(.GET, "/v2/applications?page_size=101", auth: p.basic).status == 400)
    }

    @Test("update renames and replaces capabilities but keeps the key; delete removes")
    func updateDelete() async throws {
        let p = try TestPlatform()
        let (id, _) = try await p.createApplication()
        let before = await p.send(.GET, "/v2/applications/\(id)", auth: p.basic)
        let r = await p.send(.PUT, "/v2/applications/\(id)", auth: p.basic, json: ["name": "renamed", "capabilities": ["video": [:]]])
        #expect(r.status == 200)
        #expect(r.json["name"] == "renamed")
        #expect(r.json["capabilities"] == ["video": [:]])
        #expect(r.json["keys"]?["public_key"] == before.json["keys"]?["public_key"])
        #expect(await p.send(.DELETE, "/v2/applications/\(id)", auth: p.basic).status == 204)
        #expect(await p.send(.GET, "/v2/applications/\(id)", auth: p.basic).status == 404)
        #expect(await p.send(.DELETE, "/v2/applications/\(id)", auth: p.basic).status == 404)
    }

    @Test("another account's applications do not exist for you")
    func otherAccount() async throws {
        let p = try TestPlatform()
        let (id, _) = try await p.createApplication()
        try p.core.db.execute("INSERT INTO accounts (api_key, api_secret, created_at) VALUES (?, ?, ?)",
                              [.text("0ther000"), .text("other-secret"), .int(0)])
        let other = TestPlatform.basic("0ther000", "other-secret")
        #expect(await p.send(.GET, "/v2/applications/\(id)", auth: other).status == 404)
        #expect(await p.send(.PUT, "/v2/applications/\(id)", auth: other, json: ["name": "mine"]).status == 404)
        #expect(await p.send(.DELETE, "/v2/applications/\(id)", auth: other).status == 404)
        #expect(await p.send(.GET, "/v2/applications", auth: other).json["total_items"] == 0)
    }
}
