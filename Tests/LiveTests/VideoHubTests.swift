import Foundation
import Media
import Platform
import Synchronization
import Testing
@testable import Live

/// Media for the hub that records what it was asked and refuses nothing.
final class RecordingVideoMedia: VideoMediaBridge {
    let calls = Mutex<[String]>([])
    private func record(_ call: String) { calls.withLock { $0.append(call) } }

    func publish(sessionID: String, streamID: String, offer: String) async throws(MediaError) -> String {
        record("publish")
        return "answer"
    }
    func subscribe(sessionID: String, streamID: String, subscriberID: String) async throws(MediaError) -> String {
        record("subscribe \(subscriberID)")
        return "offer"
    }
    func completeSubscription(sessionID: String, streamID: String, subscriberID: String, answer: String) async throws(MediaError) {
        throw .notFound("no subscription")
    }
    func unpublish(sessionID: String, streamID: String) async { record("unpublish \(streamID)") }
    func unsubscribe(sessionID: String, streamID: String, subscriberID: String) async { record("unsubscribe") }
    func setAudioMuted(sessionID: String, streamID: String, muted: Bool) async { record("muted \(streamID) \(muted)") }
    func connectionClosed(sessionID: String, connectionID: String) async { record("closed \(connectionID)") }
}

@Suite("Video sessions")
struct VideoHubTests {
    let store: TestStore
    let clients = RecordingClients()
    let media = RecordingVideoMedia()
    let hub: VideoHub
    let sessionID: String

    init() throws {
        store = try TestStore()
        hub = VideoHub(core: store.core, media: media, clients: clients)
        sessionID = try store.core.videoSessions.create(owner: store.account.apiKey, apiKey: store.account.apiKey).id
    }

    func token(_ role: VideoGrant.Role, ttl: TimeInterval = 600, session: String? = nil) -> String {
        VideoTokenVerifier.makeT1(apiKey: store.account.apiKey, apiSecret: store.account.apiSecret, sessionID: session ?? sessionID,
                                  role: role, data: "name=\(role.rawValue)", ttl: ttl)
    }

    @Test("the session observer is called as deep in the stack after a thousand connections as after the first")
    func observerDepthStaysTheSame() throws {
        // Each report once wrapped the observer in two more thunks: after a thousand connections it was called 2.2 MB deeper.
        let depths = Mutex<[Int]>([])
        hub.onSessionEvent { _ in
            var marker = 0
            let address = withUnsafeMutablePointer(to: &marker) { Int(bitPattern: $0) }
            depths.withLock { $0.append(address) }
        }
        for n in 1...1_000 {
            let client = ClientID(rawValue: UInt64(n))
            _ = try hub.connect(client: client, sessionID: sessionID, token: token(.publisher))
            hub.disconnect(client: client, reason: .clientDisconnected)
        }
        let seen = depths.withLock { $0 }
        #expect(seen.count >= 2_000)
        let deepening = abs(seen.last! - seen.first!)
        #expect(deepening < 16 * 1024, "the observer's frame moved \(deepening) bytes")
    }

    @Test("connections see each other and each other's streams; a moderator's force-mute reaches everyone; a closed connection takes its streams")
    func session() async throws {
        let (a, b) = (ClientID(rawValue: 1), ClientID(rawValue: 2))
        let alice = try hub.connect(client: a, sessionID: sessionID, token: token(.publisher))
        #expect(alice.others.isEmpty && alice.streams.isEmpty)
        let bob = try hub.connect(client: b, sessionID: sessionID, token: token(.moderator))
        #expect(bob.others == [alice.connection])
        #expect(clients.video(to: a) == [.connectionCreated(bob.connection)])

        let (stream, answer) = try await hub.publish(from: try hub.caller(a), name: "cam", hasAudio: true, hasVideo: true,
                                                     videoType: .camera, offer: "offer")
        #expect(answer == "answer")
        #expect(clients.video(to: b) == [.streamCreated(stream)])
        let subscribed = try await hub.subscribe(from: try hub.caller(b), streamID: stream.id)
        #expect(subscribed.offer == "offer")
        await #expect(throws: LiveError.subscriptionFailed(.notFound("no subscription"))) {
            try await hub.answerSubscription(from: try hub.caller(b), streamID: stream.id, answer: "answer")
        }

        #expect(throws: LiveError.notModerator(.forceMute)) { try hub.forceMute(by: try hub.caller(a), streamID: stream.id) }
        try hub.forceMute(by: try hub.caller(b), streamID: stream.id)
        var muted = stream
        muted.hasAudio = false
        #expect(clients.video(to: a).suffix(2) == [.streamPropertyChanged(muted, property: .hasAudio, newValue: false),
                                                  .muteForced(streamID: stream.id)])
        #expect(clients.video(to: b).last == .streamPropertyChanged(muted, property: .hasAudio, newValue: false))
        #expect(await eventually { media.calls.withLock { $0.contains("muted \(stream.id) true") } })

        hub.disconnect(client: a, reason: .networkDisconnected)
        #expect(clients.video(to: b).suffix(2) == [.streamDestroyed(muted, reason: .networkDisconnected),
                                                  .connectionDestroyed(alice.connection, reason: .networkDisconnected)])
        #expect(hub.streams(sessionID: sessionID).isEmpty)
        #expect(hub.connections(sessionID: sessionID) == [bob.connection])
        #expect(await eventually { media.calls.withLock { $0.contains("unpublish \(stream.id)") && $0.contains("closed \(alice.connection.id)") } })
        #expect(throws: LiveError.notConnected) { _ = try hub.caller(a) }
    }

    @Test("tokens: another session's is refused, an expired one too; roles limit publishing and subscribing")
    func tokensAndRoles() async throws {
        let other = try store.core.videoSessions.create(owner: store.account.apiKey, apiKey: store.account.apiKey).id
        #expect(throws: LiveError.invalidToken("The token is for another session.")) {
            _ = try hub.connect(client: ClientID(rawValue: 1), sessionID: sessionID, token: token(.publisher, session: other))
        }
        #expect(throws: LiveError.self) {
            _ = try hub.connect(client: ClientID(rawValue: 1), sessionID: sessionID, token: "T1==garbage")
        }
        let viewer = try hub.connect(client: ClientID(rawValue: 2), sessionID: sessionID, token: token(.subscriber)).connection
        await #expect(throws: LiveError.notAllowedToPublish(role: .subscriber)) {
            _ = try await hub.publish(from: viewer, name: "", hasAudio: true, hasVideo: true, videoType: .camera, offer: nil)
        }
        let sender = try hub.connect(client: ClientID(rawValue: 3), sessionID: sessionID, token: token(.publisheronly)).connection
        await #expect(throws: LiveError.notAllowedToSubscribe) { _ = try await hub.subscribe(from: sender, streamID: nil) }
        await #expect(throws: LiveError.streamNotFound(own: false)) { _ = try await hub.subscribe(from: viewer, streamID: "nope") }
        #expect(throws: LiveError.invalidSignal) {
            try hub.signal(from: sender, to: nil, type: String(repeating: "x", count: VideoHub.Limits.signalType + 1), data: "")
        }
        #expect(throws: LiveError.connectionNotFound) { try hub.signal(from: sender, to: "nobody", type: "t", data: "d") }
        try hub.signal(from: sender, to: viewer.id, type: "t", data: "d")
        #expect(clients.video(to: ClientID(rawValue: 2)).last == .signal(type: "t", data: "d", from: sender.id))
    }

    @Test("layout classes: a stream starts with its token's initial list, a project changes some streams' lists all or none")
    func layoutClasses() async throws {
        let t1 = VideoTokenVerifier.makeT1(apiKey: store.account.apiKey, apiSecret: store.account.apiSecret, sessionID: sessionID,
                                           role: .publisher, data: nil, ttl: 600, layoutClasses: ["focus", "main"])
        let alice = try hub.connect(client: ClientID(rawValue: 1), sessionID: sessionID, token: t1).connection
        let bob = try hub.connect(client: ClientID(rawValue: 2), sessionID: sessionID, token: token(.publisher)).connection
        let (cam, _) = try await hub.publish(from: alice, name: "cam", hasAudio: true, hasVideo: true, videoType: .camera, offer: nil)
        let (screen, _) = try await hub.publish(from: bob, name: "screen", hasAudio: false, hasVideo: true, videoType: .screen, offer: nil)
        #expect(cam.layoutClassList == ["focus", "main"] && screen.layoutClassList == [])

        #expect(hub.setLayoutClassLists(sessionID: sessionID, [(cam.id, []), ("gone", ["full"])]) == .failure(.init(ids: ["gone"])))
        #expect(hub.streams(sessionID: sessionID).map(\.layoutClassList) == [["focus", "main"], []])
        let after = try hub.setLayoutClassLists(sessionID: sessionID, [(cam.id, []), (screen.id, ["full"])]).get()
        #expect(after.map(\.layoutClassList) == [[], ["full"]])

        let long = VideoTokenVerifier.makeT1(apiKey: store.account.apiKey, apiSecret: store.account.apiSecret, sessionID: sessionID,
                                             role: .publisher, data: nil, ttl: 600,
                                             layoutClasses: [String(repeating: "x", count: VideoGrant.layoutClassListLimit + 1)])
        #expect(throws: LiveError.self) { _ = try hub.connect(client: ClientID(rawValue: 3), sessionID: sessionID, token: long) }
    }

    @Test("captions: only the connections that asked for a stream's captions get them; the publisher's switch is its own; a departure drops the asking")
    func captions() async throws {
        let (a, b, c) = (ClientID(rawValue: 1), ClientID(rawValue: 2), ClientID(rawValue: 3))
        _ = try hub.connect(client: a, sessionID: sessionID, token: token(.publisher))
        _ = try hub.connect(client: b, sessionID: sessionID, token: token(.subscriber))
        _ = try hub.connect(client: c, sessionID: sessionID, token: token(.publisheronly))
        let (stream, _) = try await hub.publish(from: try hub.caller(a), name: "cam", hasAudio: true, hasVideo: true, videoType: .camera,
                                                publishCaptions: true, offer: "offer")
        #expect(hub.streams(sessionID: sessionID).map(\.publishCaptions) == [true])
        #expect(throws: LiveError.streamNotFound(own: true)) { try hub.setPublishCaptions(from: try hub.caller(b), streamID: stream.id, false) }
        try hub.setPublishCaptions(from: try hub.caller(a), streamID: stream.id, false)
        #expect(hub.streams(sessionID: sessionID).map(\.publishCaptions) == [false])

        try hub.subscribeToCaptions(from: try hub.caller(b), streamID: stream.id, true)
        #expect(throws: LiveError.notAllowedToSubscribe) { try hub.subscribeToCaptions(from: try hub.caller(c), streamID: stream.id, true) }
        #expect(throws: LiveError.streamNotFound(own: false)) { try hub.subscribeToCaptions(from: try hub.caller(b), streamID: "nope", true) }
        hub.deliverCaption(sessionID: sessionID, streamID: stream.id, text: "hello", isFinal: false)
        #expect(clients.video(to: b).last == .captionReceived(streamID: stream.id, caption: "hello", isFinal: false))
        #expect(!clients.video(to: a).contains { if case .captionReceived = $0 { true } else { false } })
        try hub.subscribeToCaptions(from: try hub.caller(b), streamID: stream.id, false)
        let before = clients.video(to: b).count
        hub.deliverCaption(sessionID: sessionID, streamID: stream.id, text: "again", isFinal: true)
        #expect(clients.video(to: b).count == before)

        // Asked again, then gone: a new connection of the same client is not sent the old asking's captions.
        try hub.subscribeToCaptions(from: try hub.caller(b), streamID: stream.id, true)
        hub.disconnect(client: b, reason: .networkDisconnected)
        _ = try hub.connect(client: b, sessionID: sessionID, token: token(.subscriber))
        let reconnected = clients.video(to: b).count
        hub.deliverCaption(sessionID: sessionID, streamID: stream.id, text: "later", isFinal: true)
        #expect(clients.video(to: b).count == reconnected)
    }

    @Test("relayed sessions: the media engine is never asked; a subscription is a pair whose two ends alone pass messages, ended by unsubscribing or leaving")
    func relayed() async throws {
        let relayed = try store.core.videoSessions.create(owner: store.account.apiKey, apiKey: store.account.apiKey, mediaMode: "relayed").id
        let (a, b, c) = (ClientID(rawValue: 1), ClientID(rawValue: 2), ClientID(rawValue: 3))
        let pub = try hub.connect(client: a, sessionID: relayed, token: token(.publisher, session: relayed)).connection
        let sub = try hub.connect(client: b, sessionID: relayed, token: token(.subscriber, session: relayed)).connection
        _ = try hub.connect(client: c, sessionID: relayed, token: token(.publisher, session: relayed))
        #expect(pub.relayed && sub.relayed)
        await #expect(throws: LiveError.relayedSession) {
            _ = try await hub.publish(from: pub, name: "cam", hasAudio: true, hasVideo: true, videoType: .camera, offer: "offer")
        }
        let (stream, answer) = try await hub.publish(from: pub, name: "cam", hasAudio: true, hasVideo: true, videoType: .camera, offer: nil)
        #expect(answer == nil)
        let (_, offer) = try await hub.subscribe(from: sub, streamID: stream.id)
        #expect(offer == nil)
        #expect(clients.video(to: a).last == .relay(streamID: stream.id, subscriberID: sub.id, .subscribe))

        let sdp = VideoHub.RelayMessage.description(type: "offer", sdp: "v=0")
        try hub.relay(from: pub, streamID: stream.id, subscriberID: sub.id, sdp)
        #expect(clients.video(to: b).last == .relay(streamID: stream.id, subscriberID: sub.id, sdp))
        let candidate = VideoHub.RelayMessage.candidate(candidate: "candidate:1 1 udp 1 127.0.0.1 9 typ host", sdpMid: "0", sdpMLineIndex: 0)
        try hub.relay(from: sub, streamID: stream.id, subscriberID: sub.id, candidate)
        #expect(clients.video(to: a).last == .relay(streamID: stream.id, subscriberID: sub.id, candidate))
        #expect(throws: LiveError.relayNotFound) { try hub.relay(from: try hub.caller(c), streamID: stream.id, subscriberID: sub.id, sdp) }
        #expect(throws: LiveError.invalidRelay) {
            try hub.relay(from: pub, streamID: stream.id, subscriberID: sub.id, .description(type: "offer", sdp: String(repeating: "x", count: 70_000)))
        }
        #expect(throws: LiveError.invalidRelay) { try hub.relay(from: pub, streamID: stream.id, subscriberID: sub.id, .end) }

        await hub.unsubscribe(from: sub, streamID: stream.id)
        #expect(clients.video(to: a).last == .relay(streamID: stream.id, subscriberID: sub.id, .end))
        #expect(throws: LiveError.relayNotFound) { try hub.relay(from: sub, streamID: stream.id, subscriberID: sub.id, sdp) }
        _ = try await hub.subscribe(from: sub, streamID: stream.id)
        hub.disconnect(client: b, reason: .networkDisconnected)
        #expect(clients.video(to: a).suffix(2) == [.relay(streamID: stream.id, subscriberID: sub.id, .end), .connectionDestroyed(sub, reason: .networkDisconnected)])
        #expect(!media.calls.withLock { $0 }.contains { $0.hasPrefix("publish") || $0.hasPrefix("subscribe") })
    }
}
