import Crypto
import Foundation
import Platform
import Testing
import Wire
@testable import API

/// The Conversation API answered in-process (no socket): what an app server and a client SDK see.
@Suite("Conversations API")
struct ConversationRoutesTests {
    func bearer(_ t: String) -> String { "Bearer " + t }

    @Test("create, join as the user, post and page events; a stranger's token sees nothing")
    func lifecycle() async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        let app = bearer(p.token(app: id, key: key))
        for name in ["alice", "mallory"] {
            #expect(await p.send(.POST, "/v1/users", auth: app, json: ["name": .string(name)]).status == 201)
        }
        let created = await p.send(.POST, "/v1/conversations", auth: app, json: ["name": "standup", "display_name": "Stand-up"])
        #expect(created.status == 201)
        let cid = try #require(created.json["id"]?.stringValue)
        #expect(created.json["_links"]?["self"]?["href"]?.stringValue == "https://api.switchboard.test/v1/conversations/\(cid)")

        let alice = bearer(p.token(app: id, key: key, sub: "alice", acl: ACL.clientPaths))
        let joined = await p.send(.POST, "/v1/conversations/\(cid)/members", auth: alice,
                                  json: ["state": "joined", "channel": ["type": "app"]])
        #expect(joined.status == 201 && joined.json["state"] == "JOINED")
        for i in 0..<3 {
            let r = await p.send(.POST, "/v1/conversations/\(cid)/events", auth: alice,
                                 json: ["type": "text", "body": ["text": .string("hi \(i)")]])
            #expect(r.status == 201)
        }
        let page = await p.send(.GET, "/v1/conversations/\(cid)/events?page_size=2", auth: alice)
        #expect(page.status == 200)
        let events = page.json["_embedded"]?["events"]?.arrayValue ?? []
        #expect(events.map { $0["id"]?.intValue } == [1, 2])
        #expect(page.json["_links"]?["next"]?["href"]?.stringValue?.contains("cursor=") == true)

        // A user who is not a member cannot read the conversation.
        let mallory = bearer(p.token(app: id, key: key, sub: "mallory", acl: ACL.clientPaths))
        #expect(await p.send(.GET, "/v1/conversations/\(cid)/events", auth: mallory).status == 403)
    }

    @Test("a full room refuses one more join with 409 room-full and changes nothing")
    func capacity() async throws {
        let p = try TestPlatform()
        let (id, key) = try await p.createApplication()
        let app = bearer(p.token(app: id, key: key))
        let cid = try #require(await p.send(.POST, "/v1/conversations", auth: app, json: ["name": "small"]).json["id"]?.stringValue)
        for n in 0..<4 {
            let name = "user\(n)"
            _ = await p.send(.POST, "/v1/users", auth: app, json: ["name": .string(name)])
            let r = await p.send(.POST, "/v1/conversations/\(cid)/members", auth: bearer(p.token(app: id, key: key, sub: name, acl: ACL.clientPaths)),
                                 json: ["state": "joined", "channel": ["type": "app"]])
            #expect(r.status == (n < 3 ? 201 : 409), "\(name): \(r.status) \(r.text)")
            if n == 3 { #expect(r.json["code"] == "room-full") }
        }
        let members = await p.send(.GET, "/v1/conversations/\(cid)/members", auth: app)
        #expect(members.json["_embedded"]?["members"]?.arrayValue?.count == 3)
    }
}
