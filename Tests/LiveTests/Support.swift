import Crypto
import Foundation
import Media
import Platform
import Synchronization
import Testing
@testable import Live

/// A media engine on loopback: two workers on ephemeral ports.
func loopbackEngine(workers: Int = 2) throws -> MediaEngine {
    var configuration = MediaConfiguration()
    configuration.bindHost = "127.0.0.1"
    configuration.port = 0
    configuration.workers = workers
    return try MediaEngine(configuration: configuration)
}

/// A store in a temporary directory with one application and one conversation in it.
final class TestStore: Sendable {
    let directory: String
    let core: PlatformCore
    let account: Account
    let applicationID: String
    let conversationID: String

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("live-tests-\(UUID4.generate())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        core = try PlatformCore(dataDirectory: directory)
        account = try core.accounts.ensurePrimary().0
        applicationID = try core.applications.create(apiKey: account.apiKey, input: ApplicationInput(name: "live")).0.id
        conversationID = try core.conversations.create(applicationID: applicationID, input: .init(name: "room")).id
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    func user(_ name: String) throws -> User {
        try core.users.create(applicationID: applicationID, input: .init(name: name))
    }
}

/// Live's clients as a test sees them: every push, and who counts as connected.
final class RecordingClients: Clients {
    let roomPushes = Mutex<[(ClientID, RoomPush)]>([])
    let videoPushes = Mutex<[(ClientID, VideoPush)]>([])
    let connectedUsers = Mutex<Set<String>>([])

    func send(_ push: RoomPush, to client: ClientID) { roomPushes.withLock { $0.append((client, push)) } }
    func send(_ push: VideoPush, to client: ClientID) { videoPushes.withLock { $0.append((client, push)) } }
    func isConnected(userID: String) -> Bool { connectedUsers.withLock { $0.contains(userID) } }

    /// The offers pushed to `client`, oldest first.
    func offers(to client: ClientID) -> [(offer: String, tracks: [Track])] {
        roomPushes.withLock { pushes in
            pushes.compactMap { target, push in
                guard target == client, case .offer(_, let offer, let tracks) = push else { return nil }
                return (offer, tracks)
            }
        }
    }

    func video(to client: ClientID) -> [VideoPush] {
        videoPushes.withLock { $0.filter { $0.0 == client }.map(\.1) }
    }
}

/// Conversation events as the store publishes them.
final class RecordingEvents: ConversationEventSink {
    let events = Mutex<[ConversationEvent]>([])
    func deliver(_ event: ConversationEvent, recipients: [String]) { events.withLock { $0.append(event) } }
    func types(from member: String) -> [String] { events.withLock { $0.filter { $0.from == member }.map(\.type) } }
}

/// Polls `condition` for up to three seconds.
func eventually(_ condition: () async -> Bool) async -> Bool {
    for _ in 0..<300 {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return false
}
