import Foundation
import Platform
import Testing
import Wire
@testable import SwitchboardClient

/// Polls a main-actor condition for up to ten seconds.
@MainActor
func poll(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<500 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return condition()
}

@Suite("View models drive the reference apps' flows against a live server", .serialized)
struct ViewModelTests {
    @MainActor @Test("rooms: log in through the app server, create a room, see the other member join and speak, mute, leave")
    func rooms() async throws {
        let live = try LiveServer()
        defer { Task { await live.stop() } }
        do {
            let alice = RoomsViewModel(server: live.url)
            await alice.logIn(name: "alice")
            #expect(alice.error == nil && alice.userName == "alice")
            await alice.createRoom(named: "standup")
            let room = try #require(alice.currentRoom)
            #expect(alice.rooms.map(\.title) == ["standup"])

            let bob = RoomsViewModel(server: live.url)
            await bob.logIn(name: "bob")
            #expect(bob.rooms.map(\.id) == [room])
            try await bob.join(room, source: ToneSource(frequency: 440), sink: nil)
            #expect(bob.participants.map(\.name).sorted() == ["alice", "bob"])
            #expect(await poll { alice.participants.contains { $0.name == "bob" && $0.speaking } })
            await bob.setMuted(true)
            #expect(bob.muted && bob.error == nil)
            #expect(await poll { alice.participants.contains { $0.name == "bob" && $0.muted && !$0.speaking } })
            // Unmuted, then muted by the rooms' application (a moderator), as `PATCH …/members/{id}` does: both see it.
            await bob.setMuted(false)
            #expect(await poll { !bob.muted && alice.participants.contains { $0.name == "bob" && !$0.muted } })
            let bobID = try #require(bob.participants.first { $0.name == "bob" }?.id)
            let demo = try JSONParser.parse(String(decoding: try Data(contentsOf: URL(fileURLWithPath: live.directory + "/rooms-demo.json")), as: UTF8.self))
            _ = try live.server.core.conversations.setMedia(memberID: bobID, conversationID: room, applicationID: try #require(demo["id"]?.stringValue),
                                                            media: MemberMedia(enabled: true, muted: true))
            #expect(await poll { bob.muted && alice.participants.contains { $0.name == "bob" && $0.muted } })
            await bob.leave()
            #expect(await poll { !alice.participants.contains { $0.name == "bob" } })
            await bob.logOut()
            await alice.logOut()
        }
    }

    @MainActor @Test("video chat: connect, publish, and the other side subscribes to the stream that appears and sees it go")
    func video() async throws {
        let live = try LiveServer()
        defer { Task { await live.stop() } }
        do {
            let (sid, tokens) = try await videoSessionAndTokens(live, roles: [("publisher", "alice"), ("publisher", "bob")])
            let alice = VideoChatViewModel()
            let bob = VideoChatViewModel()
            await alice.connect(server: live.url, sessionID: sid, token: tokens[0])
            await bob.connect(server: live.url, sessionID: sid, token: tokens[1])
            #expect(await poll { alice.connections.count == 1 })
            await alice.publish(name: "alice", audio: nil, video: try IVFFileSource(path: fixtureIVF))
            let stream = try #require(alice.published)
            #expect(await poll { (bob.received[stream.id]?.keyframes ?? 0) >= 1 && (bob.received[stream.id]?.frames ?? 0) >= 20 })
            await alice.unpublish()
            #expect(await poll { bob.streams.isEmpty })
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @MainActor @Test("video chat: the audio fallback's events show as each stream's state until lifted or on again")
    func videoFallback() async {
        let model = VideoChatViewModel()
        await model.apply(.audioFallback(streamID: "s1", .videoDisableWarning))
        #expect(model.fallback == ["s1": .videoDisableWarning])
        await model.apply(.audioFallback(streamID: "s1", .videoDisableWarningLifted))
        #expect(model.fallback.isEmpty)
        await model.apply(.audioFallback(streamID: "s1", .videoDisableWarning))
        await model.apply(.audioFallback(streamID: "s1", .videoDisabled))
        await model.apply(.audioFallback(streamID: "s1", .videoDisableWarningLifted))
        #expect(model.fallback == ["s1": .videoDisabled], "off until on again")
        // This client's own stream: the publisher's events; a silent try changes nothing shown.
        await model.apply(.publisherAudioFallback(streamID: "mine", .videoDisabled, sendVideo: false))
        await model.apply(.publisherAudioFallback(streamID: "mine", nil, sendVideo: true))
        #expect(model.fallback == ["s1": .videoDisabled, "mine": .videoDisabled])
        await model.apply(.publisherAudioFallback(streamID: "mine", .videoEnabled, sendVideo: true))
        await model.apply(.audioFallback(streamID: "s1", .videoEnabled))
        #expect(model.fallback.isEmpty)
    }
}
