import Foundation
import Media
import Platform
import Testing
@testable import Live

/// Rooms over a real engine with no client: what members leave behind in the engine's maps and in the room's own.
@Suite("Audio rooms release their media")
struct RoomReleaseTests {
    let store: TestStore
    let engine: MediaEngine
    let rooms: Rooms
    var applicationID: String { store.applicationID }
    var conversationID: String { store.conversationID }

    init() throws {
        store = try TestStore()
        engine = try loopbackEngine(workers: 1)
        rooms = Rooms(engine: engine, conversations: store.core.conversations, settings: RoomSettings(), clients: RecordingClients())
    }

    /// A joined member and the client its media rides on.
    func member(_ name: String, _ client: UInt64) async throws -> (User, ClientID) {
        let user = try store.user(name)
        _ = try await rooms.join(user: user, applicationID: applicationID, conversationID: conversationID)
        return (user, ClientID(rawValue: client))
    }

    func expectEngine(_ expected: MediaObjectCounts, sourceLocation: SourceLocation = #_sourceLocation) async {
        let counts = await engine.objectCounts()
        #expect(counts.placement == expected, "engine placement maps", sourceLocation: sourceLocation)
        #expect(counts.workers == expected, "worker tables", sourceLocation: sourceLocation)
    }

    @Test("a member who leaves takes its transports, producers and the others' consumers of them out of every map")
    func leaveReleasesEverything() async throws {
        defer { engine.shutdown() }
        let (alice, aliceClient) = try await member("alice", 1)
        let (bob, bobClient) = try await member("bob", 2)
        let offer = try RoomsTests.fixtureOffer()
        for (user, client) in [(alice, aliceClient), (bob, bobClient)] {
            _ = try await rooms.publish(user: user, applicationID: applicationID, client: client, conversationID: conversationID, offer: offer)
        }
        // Offers go out; nobody answers, so a renegotiation after bob leaves waits for alice's answer.
        for (user, client) in [(alice, aliceClient), (bob, bobClient)] {
            _ = try await rooms.subscribe(user: user, applicationID: applicationID, client: client, conversationID: conversationID)
        }
        // Each publication produces the offer's audio and video; each subscriber receives the other's audio.
        await expectEngine(MediaObjectCounts(routers: 1, transports: 4, producers: 4, consumers: 2))

        await rooms.clientClosed(bobClient)
        await expectEngine(MediaObjectCounts(routers: 1, transports: 2, producers: 2, consumers: 0))
        let held = await rooms.held(conversationID, aliceClient)
        #expect(held.paused == [:], "the consumer of bob's audio is gone from alice's pause state")

        await rooms.clientClosed(aliceClient)
        await expectEngine(MediaObjectCounts())
        let after = await rooms.held(conversationID, aliceClient)
        #expect(after.rooms == 0 && after.routers == 0)
    }

    @Test("a refused first offer leaves no router behind")
    func refusedOffer() async throws {
        defer { engine.shutdown() }
        let (alice, client) = try await member("alice", 1)
        await #expect(throws: (any Error).self) {
            _ = try await rooms.publish(user: alice, applicationID: applicationID, client: client, conversationID: conversationID, offer: "v=0\r\n")
        }
        await expectEngine(MediaObjectCounts())
        let held = await rooms.held(conversationID, client)
        #expect(held.rooms == 0 && held.routers == 0)
    }
}

extension Rooms {
    /// What the actor's maps hold: rooms, routers by id, and one peer's pause state.
    func held(_ conversationID: String, _ client: ClientID) -> (rooms: Int, routers: Int, paused: [ConsumerID: Bool]?) {
        (rooms.count, roomsByRouter.count, rooms[conversationID]?.peers[client]?.paused)
    }
}
