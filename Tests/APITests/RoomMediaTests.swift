import Foundation
import Media
import Platform
import Testing
@testable import API
@testable import Runtime

/// Rooms over a real engine with no client: what members leave behind in the engine's maps and in the room's own.
@Suite("Audio rooms release their media")
struct RoomMediaTests {
    let platform: TestPlatform
    let engine: MediaEngine
    let rooms: RoomMedia
    let applicationID: String
    let conversationID: String
    /// Sockets only key the peers here; nothing is sent on them.
    let loop = EventLoop()

    init() async throws {
        platform = try TestPlatform()
        applicationID = try await platform.createApplication().id
        conversationID = try platform.core.conversations.create(applicationID: applicationID, input: .init(name: "room")).id
        var configuration = MediaConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.port = 0
        engine = try MediaEngine(configuration: configuration)
        rooms = RoomMedia(engine: engine, conversations: platform.core.conversations, settings: RoomMediaSettings(),
                          send: { _, _, _ in }, isConnected: { _ in true })
    }

    /// A joined member and the socket its media rides on.
    func member(_ name: String) async throws -> (User, WebSocket) {
        let user = try platform.core.users.create(applicationID: applicationID, input: .init(name: name))
        _ = try await rooms.join(user: user, applicationID: applicationID, conversationID: conversationID)
        return (user, WebSocket(loop: loop, remoteAddress: nil))
    }

    static func offer() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        return try String(contentsOf: root.appendingPathComponent("Fixtures/media/aiortc-publish-offer.sdp"), encoding: .utf8)
    }

    func expectEngine(_ expected: MediaObjectCounts, sourceLocation: SourceLocation = #_sourceLocation) async {
        let counts = await engine.objectCounts()
        #expect(counts.placement == expected, "engine placement maps", sourceLocation: sourceLocation)
        #expect(counts.workers == expected, "worker tables", sourceLocation: sourceLocation)
    }

    @Test("a member who leaves takes its transports, producers and the others' consumers of them out of every map")
    func leaveReleasesEverything() async throws {
        defer { engine.shutdown() }
        let (alice, aliceSocket) = try await member("alice")
        let (bob, bobSocket) = try await member("bob")
        let offer = try Self.offer()
        for (user, socket) in [(alice, aliceSocket), (bob, bobSocket)] {
            _ = try await rooms.publish(user: user, applicationID: applicationID, socket: socket, conversationID: conversationID, offer: offer)
        }
        // Offers go out; nobody answers, so a renegotiation after bob leaves waits for alice's answer.
        for (user, socket) in [(alice, aliceSocket), (bob, bobSocket)] {
            _ = try await rooms.subscribe(user: user, applicationID: applicationID, socket: socket, conversationID: conversationID)
        }
        // Each publication produces the offer's audio and video; each subscriber receives the other's audio.
        await expectEngine(MediaObjectCounts(routers: 1, transports: 4, producers: 4, consumers: 2))

        await rooms.socketClosed(bobSocket)
        await expectEngine(MediaObjectCounts(routers: 1, transports: 2, producers: 2, consumers: 0))
        let held = await rooms.held(conversationID, aliceSocket)
        #expect(held.paused == [:], "the consumer of bob's audio is gone from alice's pause state")

        await rooms.socketClosed(aliceSocket)
        await expectEngine(MediaObjectCounts())
        let after = await rooms.held(conversationID, aliceSocket)
        #expect(after.rooms == 0 && after.routers == 0)
    }

    @Test("a refused first offer leaves no router behind")
    func refusedOffer() async throws {
        defer { engine.shutdown() }
        let (alice, socket) = try await member("alice")
        await #expect(throws: (any Error).self) {
            _ = try await rooms.publish(user: alice, applicationID: applicationID, socket: socket, conversationID: conversationID, offer: "v=0\r\n")
        }
        await expectEngine(MediaObjectCounts())
        let held = await rooms.held(conversationID, socket)
        #expect(held.rooms == 0 && held.routers == 0)
    }
}

extension RoomMedia {
    /// What the actor's maps hold: rooms, routers by id, and one peer's pause state.
    func held(_ conversationID: String, _ socket: WebSocket) -> (rooms: Int, routers: Int, paused: [ConsumerID: Bool]?) {
        (rooms.count, roomsByRouter.count, rooms[conversationID]?.peers[socket]?.paused)
    }
}
