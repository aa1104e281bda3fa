import Foundation
import Media
import MediaLoad
import Platform
import Testing
import Wire
@testable import Live

@Suite("A live room follows its conversation's room_mode")
struct RoomModeSwitchTests {
    let store: TestStore
    let engine: MediaEngine
    let clients = RecordingClients()
    var app: String { store.applicationID }
    var conversation: String { store.conversationID }

    init() throws {
        store = try TestStore()
        engine = try loopbackEngine()
    }

    func setMode(_ mode: RoomMode, in rooms: Rooms) async throws {
        _ = try store.core.conversations.update(id: conversation, applicationID: app,
                                                input: .init(properties: .object(["room_mode": .string(mode.rawValue)])))
        await rooms.conversationUpdated(conversationID: conversation, applicationID: app)
    }

    @Test("sfu → mixed → sfu on a live room: each switch is pushed as a new offer on the same transports, members keep hearing")
    func switchesLive() async throws {
        defer { engine.shutdown() }
        let rooms = Rooms(engine: engine, conversations: store.core.conversations, settings: RoomSettings(), clients: clients)
        let generator = try LoadGenerator(threads: 1)
        defer { generator.shutdown() }
        let (a, b) = (ClientID(rawValue: 1), ClientID(rawValue: 2))
        var users: [ClientID: User] = [:]
        for (client, name) in [(a, "alice"), (b, "bob")] {
            let user = try store.user(name)
            _ = try await rooms.join(user: user, applicationID: app, conversationID: conversation)
            users[client] = user
            let (peer, offer) = try await generator.makePublisher(video: false)
            let published = try await rooms.publish(user: user, applicationID: app, client: client, conversationID: conversation, offer: offer)
            try await generator.completePublisher(peer, answer: published.answer)
        }
        // Bob's subscription comes with its first offer; alice's was pushed when bob published.
        let bobFirst = try await rooms.subscribe(user: users[b]!, applicationID: app, client: b, conversationID: conversation)
        let aliceFirst = try await rooms.subscribe(user: users[a]!, applicationID: app, client: a, conversationID: conversation)
        for (client, offer) in [(b, bobFirst.offer), (a, aliceFirst.offer)] {
            let (_, answer) = try await generator.makeSubscriber(offer: try #require(offer))
            try await rooms.answer(client: client, conversationID: conversation, answer: answer)
        }
        #expect(await rooms.currentMode(conversationID: conversation) == .sfu, "the server's auto: 2 members forward")
        #expect(await eventually { await generator.connectionCounts().connected >= 4 }, "peers connect")

        func received() async throws -> Int {
            try await Task.sleep(for: .milliseconds(300))
            await generator.startMeasuring()
            try await Task.sleep(for: .milliseconds(800))
            return Int(await generator.stopMeasuring(seconds: 0.8).subscribersReceived)
        }
        #expect(try await received() > 40, "forwarding: each hears the other")

        // Mixed: one more offer each, whose only live m-line is the room mix; no new transport.
        try await setMode(.mixed, in: rooms)
        #expect(await rooms.currentMode(conversationID: conversation) == .mixed)
        for client in [a, b] {
            let offers = clients.offers(to: client)
            #expect(offers.last?.tracks.map(\.name) == ["Room mix"], "\(offers.last?.tracks ?? [])")
            let (_, answer) = try await generator.makeSubscriber(offer: try #require(offers.last).offer)
            try await rooms.answer(client: client, conversationID: conversation, answer: answer)
        }
        #expect(rooms.counts == (peers: 2, transports: 4))
        #expect(try await received() > 40, "mixing: each hears the mix on its first connection")
        let mixer = try #require(await rooms.mixer(conversationID: conversation))
        let stats = try await engine.mixerStats(mixer.id)
        #expect(stats.inputs == 2 && stats.outputs == 2 && stats.packetsSent > 0)

        // The same again is no change: nothing pushed.
        let pushed = clients.roomPushes.withLock { $0.count }
        try await setMode(.mixed, in: rooms)
        #expect(clients.roomPushes.withLock { $0.count } == pushed)

        // Back to forwarding: the mixer goes, each hears the other member's own track again.
        try await setMode(.sfu, in: rooms)
        #expect(await rooms.currentMode(conversationID: conversation) == .sfu)
        #expect(await rooms.mixer(conversationID: conversation) == nil)
        #expect(clients.offers(to: a).last?.tracks.map(\.name) == ["bob"])
        #expect(clients.offers(to: b).last?.tracks.map(\.name) == ["alice"])
        for client in [a, b] {
            let (_, answer) = try await generator.makeSubscriber(offer: try #require(clients.offers(to: client).last).offer)
            try await rooms.answer(client: client, conversationID: conversation, answer: answer)
        }
        #expect(rooms.counts == (peers: 2, transports: 4))
        #expect(try await received() > 40, "forwarding again")
    }
}
