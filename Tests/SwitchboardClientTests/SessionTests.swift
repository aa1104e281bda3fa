import Foundation
import Testing
import Wire
@testable import API
@testable import SwitchboardClient

@Suite("Session against a live server", .serialized)
struct SessionTests {
    @Test("login gives the user; bad, expired and under-privileged tokens fail with their typed errors")
    func loginErrors() async throws {
        try await LiveServer.with { live in
            let session = try await Session.connect(to: live.url, token: try live.userToken("alice"))
            #expect(session.user.name == "alice")
            #expect(session.sessionID?.hasPrefix("SES-") == true)
            await session.logout()
            #expect(session.endReason == .closed)

            await #expect(throws: SessionError.invalidToken) {
                _ = try await Session.connect(to: live.url, token: "not.a.token")
            }
            await #expect(throws: SessionError.tokenExpired) {
                _ = try await Session.connect(to: live.url, token: try live.userToken("alice", lifetime: 600, issuedAgo: 3600))
            }
            await #expect(throws: SessionError.forbidden) {
                _ = try await Session.connect(to: live.url, token: try live.userToken("alice", acl: ["/*/conversations/**"]))
            }
        }
    }

    @Test("two clients in a conversation see each other's member and text events")
    func memberEvents() async throws {
        try await LiveServer.with { live in
            let room = try live.conversation("lobby")
            let alice = try await Session.connect(to: live.url, token: try live.userToken("alice"))
            let bob = try await Session.connect(to: live.url, token: try live.userToken("bob"))
            let seen = Collector(alice.events())
            let aliceMember = try await alice.conversations.join(room)
            #expect(aliceMember.state == .joined)
            let bobMember = try await bob.conversations.join(room)
            try await bob.conversations.send(text: "hello alice", to: room)
            try await bob.conversations.send(custom: "wave", body: ["hand": "left"], to: room)
            #expect(await seen.wait { events in events.contains { $0.kind == .custom("wave") } })
            let events = seen.all.filter { $0.conversationID == room }
            #expect(events.contains { $0.kind == .memberJoined && $0.memberID == bobMember.id && $0.userName == "bob" })
            #expect(events.contains { $0.kind == .text && $0.text == "hello alice" && $0.from == bobMember.id })
            #expect(events.first { $0.kind == .custom("wave") }?.body["hand"]?.stringValue == "left")

            // The same events over REST, a page at a time.
            let first = try await alice.conversations.events(in: room, pageSize: 2)
            #expect(first.items.map(\.id) == [1, 2])
            let firstCursor: String = try #require(first.nextCursor)
            let second = try await alice.conversations.events(in: room, pageSize: 2, cursor: firstCursor)
            #expect(second.items.map(\.id) == [3, 4])
            let members = try await alice.conversations.members(in: room, pageSize: 1)
            #expect(members.items.count == 1)
            let membersCursor: String = try #require(members.nextCursor)
            let rest = try await alice.conversations.members(in: room, pageSize: 1, cursor: membersCursor)
            #expect(Set((members.items + rest.items).compactMap(\.userName)) == ["alice", "bob"])
            let list = try await bob.conversations.list()
            #expect(list.items.map(\.id) == [room])
            #expect(try await bob.conversations.get(room).name == "lobby")

            try await bob.conversations.leave(room)
            #expect(await seen.wait { $0.contains { $0.kind == .memberLeft && $0.memberID == bobMember.id } })
            await #expect(throws: SessionError.forbidden) { _ = try await alice.conversations.create(name: "mine") }
            await alice.logout()
            await bob.logout()
        }
    }

    @Test("the server drops the socket mid-stream: the client resumes with no event lost or repeated")
    func resume() async throws {
        try await LiveServer.with { live in
            let room = try live.conversation("resume")
            var options = Session.Options()
            options.backoff = Backoff(first: .milliseconds(200), maximum: .seconds(1))
            let alice = try await Session.connect(to: live.url, token: try live.userToken("alice"), options: options)
            let events = Collector(alice.events())
            let states = Collector(alice.states())
            try await alice.conversations.join(room)
            let total = 60
            let poster = Task {
                for n in 1...total {
                    _ = try await live.rest(.POST, "/v1/conversations/\(room)/events", ["type": "custom:tick", "body": ["n": .number(Double(n))]])
                    try await Task.sleep(for: .milliseconds(15))
                }
            }
            #expect(await events.wait { $0.filter { $0.kind == .custom("tick") }.count >= 10 })
            // What the server does on a ping timeout: push the error, close with 4002.
            let gateway = live.server.gateway
            let socket = try #require(gateway.state.withLock { s in s.sessions[alice.sessionID ?? ""]?.socket })
            gateway.fail(socket, "session:error", rid: nil, .pingTimeout, "test")
            socket.close(code: 4002, reason: "pingTimeout")
            try await poster.value
            #expect(await events.wait { $0.filter { $0.kind == .custom("tick") }.count >= total })
            try await Task.sleep(for: .milliseconds(300))
            let ticks = events.all.filter { $0.kind == .custom("tick") }.compactMap { $0.body["n"]?.intValue }
            #expect(ticks == Array(1...total))
            let ids = events.all.filter { $0.conversationID == room }.map(\.id)
            #expect(ids == Array(1...(total + 1)))
            #expect(states.all.contains(.reconnecting(reason: .pingTimeout, attempt: 1)))
            #expect(states.all.contains { if case .connected(resumed: true, _) = $0 { return true } else { return false } })
            await alice.logout()
        }
    }

    @Test("a token that runs out mid-session ends it with tokenExpired; a refreshed one keeps it alive")
    func tokenExpiry() async throws {
        try await LiveServer.with { live in
            // Expired 58 s ago: still inside the 60 s leeway for two seconds.
            let short = try live.userToken("alice", lifetime: 42, issuedAgo: 100)
            let ending = try await Session.connect(to: live.url, token: short)
            let states = Collector(ending.states())
            #expect(await states.wait(seconds: 8) { $0.contains(.disconnected(.tokenExpired)) })
            #expect(ending.endReason == .tokenExpired)
            await #expect(throws: SessionError.tokenExpired) { try await ending.conversations.setMuted(true, in: "CON-x") }

            let kept = try await Session.connect(to: live.url, token: try live.userToken("bob", lifetime: 42, issuedAgo: 100))
            let keptStates = Collector(kept.states())
            try await kept.refresh(token: try live.userToken("bob"))
            try await Task.sleep(for: .seconds(4))
            #expect(keptStates.all.isEmpty)
            #expect(kept.endReason == nil)
            await kept.logout()
        }
    }
}
