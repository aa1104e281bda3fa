import Foundation
import Platform
import Synchronization
import Testing
import Wire

/// Conversation events as the realtime gateway and webhooks receive them: published only once stored, in
/// id order, to the right users.
@Suite("Conversation events")
struct ConversationEventTests {
    final class Recorder: ConversationEventSink {
        let delivered = Mutex<[(conversation: String, id: Int64, type: String, recipients: [String])]>([])
        func deliver(_ event: ConversationEvent, recipients: [String]) {
            delivered.withLock { $0.append((event.conversationID, event.id, event.type, recipients)) }
        }
    }

    struct World {
        let directory: String
        let core: PlatformCore
        let appID: String
        let recorder = Recorder()

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("platform-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            core = try PlatformCore(dataDirectory: directory)
            let (account, _) = try core.accounts.ensurePrimary()
            appID = try core.applications.create(apiKey: account.apiKey, input: ApplicationInput(name: "events")).0.id
            core.conversations.bus.add(recorder)
        }

        func user(_ name: String) throws -> User {
            try core.users.create(applicationID: appID, input: UserInput(name: name))
        }

        func conversation() throws -> String {
            try core.conversations.create(applicationID: appID, input: Conversations.Input(name: "c-\(UUID().uuidString)")).id
        }
    }

    @Test("concurrent writers: every event is delivered once, in id order, and is already readable")
    func concurrentWriters() async throws {
        let w = try World()
        defer { try? FileManager.default.removeItem(atPath: w.directory) }
        let alice = try w.user("alice")
        let cid = try w.conversation()
        _ = try w.core.conversations.addMember(conversationID: cid, applicationID: w.appID, user: alice, state: .joined)
        await withTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    for i in 0..<50 {
                        _ = try? w.core.conversations.postEvent(conversationID: cid, applicationID: w.appID, type: "custom:n",
                                                                from: nil, body: ["writer": .number(Double(writer)), "i": .number(Double(i))])
                    }
                }
            }
        }
        let delivered = w.recorder.delivered.withLock { $0 }.filter { $0.conversation == cid }
        #expect(delivered.map(\.id) == Array(1...401))
        #expect(delivered.allSatisfy { $0.recipients == [alice.id] })
        let stored = try w.core.conversations.events(conversationID: cid, after: 0, limit: 1000)
        #expect(stored.map(\.id) == delivered.map(\.id))
    }

    @Test("a join refused for capacity stores and publishes nothing")
    func refusedJoin() throws {
        let w = try World()
        defer { try? FileManager.default.removeItem(atPath: w.directory) }
        let (alice, bob) = (try w.user("alice"), try w.user("bob"))
        let cid = try w.conversation()
        _ = try w.core.conversations.addMember(conversationID: cid, applicationID: w.appID, user: alice, state: .joined, capacity: 1)
        #expect(throws: PlatformError.self) {
            try w.core.conversations.addMember(conversationID: cid, applicationID: w.appID, user: bob, state: .joined, capacity: 1)
        }
        let delivered = w.recorder.delivered.withLock { $0 }.filter { $0.conversation == cid }
        #expect(delivered.map(\.type) == ["member:joined"])
        #expect(try w.core.conversations.events(conversationID: cid, after: 0, limit: 10).count == 1)
    }

    @Test("a leaver hears its own member:left; then it hears nothing more of the conversation")
    func leaverRecipients() throws {
        let w = try World()
        defer { try? FileManager.default.removeItem(atPath: w.directory) }
        let (alice, bob) = (try w.user("alice"), try w.user("bob"))
        let cid = try w.conversation()
        _ = try w.core.conversations.addMember(conversationID: cid, applicationID: w.appID, user: alice, state: .joined)
        let b = try w.core.conversations.addMember(conversationID: cid, applicationID: w.appID, user: bob, state: .joined)
        _ = try w.core.conversations.leave(memberID: b.id, conversationID: cid, applicationID: w.appID)
        _ = try w.core.conversations.postEvent(conversationID: cid, applicationID: w.appID, type: "text", from: nil, body: ["text": "hi"])
        let delivered = w.recorder.delivered.withLock { $0 }.filter { $0.conversation == cid }
        #expect(delivered.map(\.type) == ["member:joined", "member:joined", "member:left", "text"])
        #expect(Set(delivered[2].recipients) == [alice.id, bob.id])
        #expect(delivered[3].recipients == [alice.id])
    }
}
