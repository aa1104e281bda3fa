import Foundation
import Media
import MediaLoad
import Platform
import Testing
@testable import Live

@Suite("Audio rooms")
struct RoomsTests {
    let store: TestStore
    let engine: MediaEngine
    let clients = RecordingClients()
    var app: String { store.applicationID }
    var conversation: String { store.conversationID }

    init() throws {
        store = try TestStore()
        engine = try loopbackEngine()
    }

    func rooms(_ configure: (inout RoomSettings) -> Void = { _ in }) -> Rooms {
        var settings = RoomSettings()
        configure(&settings)
        return Rooms(engine: engine, conversations: store.core.conversations, settings: settings, clients: clients)
    }

    /// A user who has joined the conversation.
    func member(_ name: String, in rooms: Rooms) async throws -> User {
        let user = try store.user(name)
        _ = try await rooms.join(user: user, applicationID: app, conversationID: conversation)
        return user
    }

    @Test("only the grace timer of a member's latest disconnect can mark it left, not an older one firing into a brief drop")
    func graceTimersDoNotOverlap() async throws {
        defer { engine.shutdown() }
        let rooms = rooms { $0.leaveGrace = .seconds(2) }
        let alice = try await member("alice", in: rooms)
        func connect(_ client: UInt64) async throws {
            clients.connectedUsers.withLock { _ = $0.insert(alice.id) }
            try await rooms.earmuff(user: alice, applicationID: app, client: ClientID(rawValue: client), conversationID: conversation, earmuffed: false)
        }
        func drop(_ client: UInt64) async {
            clients.connectedUsers.withLock { _ = $0.remove(alice.id) }
            await rooms.clientClosed(ClientID(rawValue: client))
        }
        let start = ContinuousClock.now
        try await connect(1)
        await drop(1)                                          // t=0: the first timer is due at 2 s
        try await Task.sleep(until: start + .milliseconds(200), clock: .continuous)
        try await connect(2)                                   // back at 0.2 s
        try await Task.sleep(until: start + .seconds(1), clock: .continuous)
        await drop(2)                                          // a brief second drop at 1 s: its timer is due at 3 s
        try await Task.sleep(until: start + .milliseconds(2_400), clock: .continuous)  // the first timer has fired, the second has not
        let member = try #require(try store.core.conversations.member(ofUser: alice.id, conversationID: conversation))
        #expect(member.state == .joined)
    }

    static func fixtureOffer() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("Fixtures/media/aiortc-publish-offer.sdp"), encoding: .utf8)
    }

    @Test("two members hear each other: the second microphone reaches the first by a pushed offer, and leaves with its connection")
    func twoMembers() async throws {
        defer { engine.shutdown() }
        let rooms = rooms { $0.leaveGrace = .milliseconds(50) }
        let generator = try LoadGenerator(threads: 1)
        defer { generator.shutdown() }
        let alice = try await member("alice", in: rooms)
        let bob = try await member("bob", in: rooms)
        let (a, b) = (ClientID(rawValue: 1), ClientID(rawValue: 2))

        let (alicePeer, aliceOffer) = try await generator.makePublisher(video: false)
        let alicePublished = try await rooms.publish(user: alice, applicationID: app, client: a, conversationID: conversation, offer: aliceOffer)
        try await generator.completePublisher(alicePeer, answer: alicePublished.answer)
        // Nobody else publishes yet: nothing to offer.
        let first = try await rooms.subscribe(user: alice, applicationID: app, client: a, conversationID: conversation)
        #expect(first.offer == nil && first.tracks.isEmpty)

        let (bobPeer, bobOffer) = try await generator.makePublisher(video: false)
        let bobPublished = try await rooms.publish(user: bob, applicationID: app, client: b, conversationID: conversation, offer: bobOffer)
        try await generator.completePublisher(bobPeer, answer: bobPublished.answer)
        let pushed = clients.offers(to: a)
        try #require(pushed.count == 1)
        #expect(pushed[0].tracks.map(\.producerID) == [bobPublished.producerID])
        #expect(pushed[0].tracks.map(\.name) == ["bob"])
        #expect(pushed[0].tracks.map(\.memberID) == [bobPublished.memberID])
        let (_, aliceAnswer) = try await generator.makeSubscriber(offer: pushed[0].offer)
        try await rooms.answer(client: a, conversationID: conversation, answer: aliceAnswer)

        let bobSubscription = try await rooms.subscribe(user: bob, applicationID: app, client: b, conversationID: conversation)
        #expect(bobSubscription.tracks.map(\.producerID) == [alicePublished.producerID])
        let (_, bobAnswer) = try await generator.makeSubscriber(offer: try #require(bobSubscription.offer))
        try await rooms.answer(client: b, conversationID: conversation, answer: bobAnswer)
        #expect(rooms.counts == (peers: 2, transports: 4))

        #expect(await eventually { await generator.connectionCounts().connected >= 4 }, "peers connect")
        try await Task.sleep(for: .milliseconds(300))
        await generator.startMeasuring()
        try await Task.sleep(for: .milliseconds(500))
        let report = await generator.stopMeasuring(seconds: 0.5)
        #expect(report.subscribersReceived > 20, "each hears the other")

        // Bob's connection closes: his transports go, alice is offered the change, and with no realtime
        // session left he is marked left after the grace period.
        await rooms.clientClosed(b)
        #expect(rooms.counts == (peers: 1, transports: 2))
        #expect(clients.offers(to: a).count == 2)
        #expect(clients.offers(to: a).last?.tracks.isEmpty == true)
        #expect(await eventually {
            (try? store.core.conversations.member(ofUser: bob.id, conversationID: conversation))??.state == .left
        }, "bob is marked left after the grace period")
        #expect(try store.core.conversations.member(ofUser: alice.id, conversationID: conversation)?.state == .joined)
    }

    @Test("a large room forwards only the loudest unmuted speaker; speaking follows the levels")
    func loudestSpeakers() async throws {
        defer { engine.shutdown() }
        let rooms = rooms {
            $0.forwardAllBelow = 3
            $0.loudest = 1
            $0.speakingHold = .zero
        }
        let events = RecordingEvents()
        store.core.conversations.bus.add(events)
        let offer = try Self.fixtureOffer()
        var producers: [String: ProducerID] = [:]
        var members: [String: String] = [:]
        let names = ["alice", "bob", "carol"]
        let client = Dictionary(uniqueKeysWithValues: names.enumerated().map { ($1, ClientID(rawValue: UInt64($0 + 1))) })
        var users: [String: User] = [:]
        for name in names {
            let user = try await member(name, in: rooms)
            users[name] = user
            let published = try await rooms.publish(user: user, applicationID: app, client: client[name]!, conversationID: conversation, offer: offer)
            producers[name] = published.producerID
            members[name] = published.memberID
        }
        for name in names {
            _ = try await rooms.subscribe(user: users[name]!, applicationID: app, client: client[name]!, conversationID: conversation)
        }
        let router = try #require(await rooms.router(of: conversation))
        func levels(_ loudness: [String: Int]) async {
            await rooms.levels(router: router, loudness.map { AudioLevel(producer: producers[$0.key]!, mean: $0.value, peak: $0.value) })
        }
        func hears(_ name: String) async -> Set<ProducerID> { await rooms.receiving(conversation, client[name]!) }

        await levels(["alice": 10, "bob": 90, "carol": 0])
        #expect(await hears("alice") == [producers["bob"]!])
        #expect(await hears("carol") == [producers["bob"]!])
        #expect(await hears("bob") == [], "nobody else is among the loudest")
        #expect(events.types(from: members["bob"]!).contains("audio:speaking:on"))

        for _ in 0..<2 { await levels(["alice": 0, "bob": 0, "carol": 120]) }
        #expect(await hears("alice") == [producers["carol"]!])
        #expect(await hears("bob") == [producers["carol"]!])
        #expect(events.types(from: members["bob"]!).suffix(1) == ["audio:speaking:off"])

        // A muted speaker is never among the loudest.
        try await rooms.mute(user: users["carol"]!, applicationID: app, client: client["carol"]!, conversationID: conversation, muted: true)
        #expect(await hears("alice") == [producers["bob"]!])
        #expect(events.types(from: members["carol"]!).contains("audio:mute:on"))
        #expect(events.types(from: members["carol"]!).suffix(1) == ["audio:speaking:off"])
    }

    @Test("refusals: not joined, a full room, mute before publish, an answer nobody asked for")
    func refusals() async throws {
        defer { engine.shutdown() }
        let rooms = rooms { $0.capacity = 1 }
        let offer = try Self.fixtureOffer()
        let alice = try await member("alice", in: rooms)
        let stranger = try store.user("stranger")
        await #expect(throws: LiveError.notJoined) {
            _ = try await rooms.publish(user: stranger, applicationID: app, client: ClientID(rawValue: 9), conversationID: conversation, offer: offer)
        }
        await #expect(throws: LiveError.notPublishing) {
            try await rooms.mute(user: alice, applicationID: app, client: ClientID(rawValue: 1), conversationID: conversation, muted: true)
        }
        await #expect(throws: LiveError.noOffer) {
            try await rooms.answer(client: ClientID(rawValue: 1), conversationID: conversation, answer: "v=0\r\n")
        }
        _ = try await rooms.publish(user: alice, applicationID: app, client: ClientID(rawValue: 1), conversationID: conversation, offer: offer)
        // The store admits bob (an app server may), but the room holds one member with media.
        let bob = try store.user("bob")
        _ = try store.core.conversations.addMember(conversationID: conversation, applicationID: app, user: bob, state: .joined)
        await #expect(throws: LiveError.roomFull(capacity: 1)) {
            _ = try await rooms.publish(user: bob, applicationID: app, client: ClientID(rawValue: 2), conversationID: conversation, offer: offer)
        }
        await #expect(throws: LiveError.self) {
            _ = try await rooms.publish(user: alice, applicationID: app, client: ClientID(rawValue: 1), conversationID: conversation, offer: "v=0\r\n")
        }
    }
}

extension Rooms {
    func router(of conversationID: String) -> RouterID? { rooms[conversationID]?.router }

    /// The producers a client's subscription forwards now (consumers not paused).
    func receiving(_ conversationID: String, _ client: ClientID) -> Set<ProducerID> {
        guard let peer = rooms[conversationID]?.peers[client], let subscription = peer.subscription else { return [] }
        return Set(engine.activeConsumers(subscription).filter { peer.paused[$0.value] != true }.keys)
    }
}
