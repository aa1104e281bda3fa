import Audio
import Foundation
@testable import API
import Platform
import Live
import Synchronization
import Testing
import Wire
@testable import SwitchboardClient

/// The playground's helpers hand out a session and `T1` tokens to loopback callers.
func videoSessionAndTokens(_ live: LiveServer, roles: [(String, String)]) async throws -> (String, [String]) {
    let client = RESTClient(base: live.url, token: { "" }, caFile: nil)
    let session = try await client.call(.POST, "/video/api/session", body: .object([:]))
    let sid = try #require(session["sessionId"]?.stringValue)
    var tokens: [String] = []
    for (role, name) in roles {
        let t = try await client.call(.POST, "/video/api/token", body: ["sessionId": .string(sid), "role": .string(role), "data": .string("name=\(name)")])
        tokens.append(try #require(t["token"]?.stringValue))
    }
    return (sid, tokens)
}

func fixture(_ name: String) -> String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Fixtures/media/\(name)").path
}
let fixtureIVF = fixture("vp8-320x240.ivf")

@Suite("Video sessions against a live server", .serialized)
struct VideoSessionTests {
    @Test("a publisher's VP8 recording reaches a subscriber: frames counted, key frames seen; signals and stream events flow")
    func publishSubscribe() async throws {
        try await LiveServer.with { live in
            let (sid, tokens) = try await videoSessionAndTokens(live, roles: [("publisher", "alice"), ("subscriber", "bob")])
            let alice = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[0])
            let aliceEvents = Collector(alice.events())
            let bob = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[1])
            let bobEvents = Collector(bob.events())
            #expect(bob.connections.map(\.id) == [alice.connectionID])
            #expect(await aliceEvents.wait { $0.contains { if case .connectionCreated(let c) = $0 { c.id == bob.connectionID && c.data == "name=bob" } else { false } } })

            let published = try await alice.publish(name: "alice-cam", audio: ToneSource(frequency: 440), video: try IVFFileSource(path: fixtureIVF))
            #expect(await bobEvents.wait { $0.contains(where: { if case .streamCreated(let s) = $0 { s.id == published.id && s.name == "alice-cam" } else { false } }) })
            let frames = VideoFrameCounter()
            let heard = LevelMeter()
            try await bob.subscribe(published.id, audio: heard, video: frames)
            #expect(await eventually(seconds: 15) { frames.frames >= 30 && frames.keyframes >= 1 && (heard.levels[published.id]?.frames ?? 0) > 25 })
            #expect(frames.keyframes >= 1)
            #expect(abs((heard.levels[published.id]?.frequency ?? 0) - 440) < 40)
            // A preferred size and frame rate are taken (this stream comes in one size without temporal layers, and
            // keeps coming whole), cleared, and checked.
            try await bob.setPreferredResolution(published.id, (width: 320, height: 180))
            try await bob.setPreferredFrameRate(published.id, 7.5)
            try await bob.setPreferredResolution(published.id, nil)
            try await bob.setPreferredFrameRate(published.id, nil)
            let before = frames.frames
            #expect(await eventually(seconds: 10) { frames.frames >= before + 10 })
            for (stream, size, code) in [(published.id, (width: 0, height: 180), "invalidPreference"), ("no-such-stream", (width: 320, height: 180), "notFound")] {
                do {
                    try await bob.setPreferredResolution(stream, size)
                    Issue.record("\(stream) \(size) taken")
                } catch { #expect((error as? SessionError)?.code == code) }
            }
            do {
                try await bob.setPreferredFrameRate(published.id, 0)
                Issue.record("a frame rate of 0 taken")
            } catch { #expect((error as? SessionError)?.code == "invalidPreference") }

            // Video off: the server sends none while the audio keeps coming; on again: frames again.
            try await bob.subscribeToVideo(published.id, false)
            try await Task.sleep(for: .milliseconds(300))  // what was on its way
            let stopped = frames.frames
            let heardThen = heard.levels[published.id]?.frames ?? 0
            #expect(await eventually(seconds: 5) { (heard.levels[published.id]?.frames ?? 0) >= heardThen + 50 })
            #expect(frames.frames == stopped, "no video while it is off")
            try await bob.subscribeToVideo(published.id, true)
            #expect(await eventually(seconds: 15) { frames.frames >= stopped + 10 })
            // Audio off and on the same way.
            try await bob.subscribeToAudio(published.id, false)
            try await Task.sleep(for: .milliseconds(300))
            let silent = heard.levels[published.id]?.frames ?? 0
            let framesThen = frames.frames
            #expect(await eventually(seconds: 5) { frames.frames >= framesThen + 10 })
            #expect((heard.levels[published.id]?.frames ?? 0) == silent, "no audio while it is off")
            try await bob.subscribeToAudio(published.id, true)
            #expect(await eventually(seconds: 5) { (heard.levels[published.id]?.frames ?? 0) >= silent + 25 })

            try await bob.signal(type: "chat", data: "hi alice", to: alice.connectionID)
            #expect(await aliceEvents.wait { $0.contains(.signal(type: "chat", data: "hi alice", from: bob.connectionID)) })

            let camera = try IVFFileSource(path: fixtureIVF)
            do {
                _ = try await bob.publish(name: "nope", video: camera)
                Issue.record("a subscriber published")
            } catch {
                #expect((error as? SessionError)?.code == "notAllowedToPublish")
            }

            try await alice.unpublish(published.id)
            #expect(await bobEvents.wait { $0.contains { if case .streamDestroyed(let s, _) = $0 { s.id == published.id } else { false } } })
            await alice.disconnect()
            #expect(await bobEvents.wait { $0.contains { if case .connectionDestroyed(let c, _) = $0 { c.id == alice.connectionID } else { false } } })
            await bob.disconnect()

            await #expect(throws: SessionError.invalidToken) {
                _ = try await VideoSession.connect(to: live.url, sessionID: sid, token: "T1==garbage")
            }
        }
    }

    @Test("what is pushed after connect returns and before the app asks for its events reaches the first events stream, after .connected")
    func eventsBeforeTheFirstStream() async throws {
        try await LiveServer.with { live in
            let (sid, tokens) = try await videoSessionAndTokens(live, roles: [("publisher", "alice"), ("subscriber", "bob")])
            let bob = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[1])
            let alice = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[0])
            let published = try await alice.publish(name: "alice-cam", video: try IVFFileSource(path: fixtureIVF))
            #expect(bob.streams.isEmpty && bob.connections.isEmpty)
            // Time for the pushes to reach bob's session before he asks for a stream of them (they went to no one before).
            try await Task.sleep(for: .seconds(1))
            let bobEvents = Collector(bob.events())
            #expect(await bobEvents.wait { events in
                events.contains { if case .connectionCreated(let c) = $0 { c.id == alice.connectionID } else { false } }
                    && events.contains { if case .streamCreated(let s) = $0 { s.id == published.id } else { false } }
            })
            if case .connected = bobEvents.all.first {} else { Issue.record("the first event is not .connected: \(bobEvents.all)") }
            // A later stream starts from what happens after it.
            let later = Collector(bob.events())
            try await alice.unpublish(published.id)
            #expect(await later.wait { $0.contains { if case .streamDestroyed(let s, _) = $0 { s.id == published.id } else { false } } })
            #expect(!later.all.contains { if case .streamCreated = $0 { true } else { false } })
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("a simulcast publisher: each subscriber gets the size it prefers, sizes no one takes pause at the publisher and resume when one is wanted")
    func simulcast() async throws {
        // Three sizes of one picture, given in any order: sent smallest first as q, h, f.
        let camera = try IVFFileSource(simulcast: [fixture("vp8-640x480.ivf"), fixture("vp8-160x120.ivf"), fixture("vp8-320x240.ivf")])
        #expect(camera.rids == ["q", "h", "f"] && camera.width == 640 && camera.height == 480)
        #expect(throws: IVFFileSource.LoadError.self) { try IVFFileSource(simulcast: [fixtureIVF]) }
        #expect(throws: IVFFileSource.LoadError.self) { try IVFFileSource(simulcast: [fixtureIVF, fixtureIVF]) }

        try await LiveServer.with { live in
            let (sid, tokens) = try await videoSessionAndTokens(live, roles: [("publisher", "alice"), ("subscriber", "bob"), ("subscriber", "carol")])
            let alice = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[0])
            let aliceEvents = Collector(alice.events())
            let bob = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[1])
            let carol = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[2])
            let published = try await alice.publish(name: "alice-cam", video: camera)
            let small = VideoFrameCounter(), large = VideoFrameCounter()
            try await bob.subscribe(published.id, video: small)
            try await bob.setPreferredResolution(published.id, (width: 160, height: 120))
            try await carol.subscribe(published.id, video: large)
            #expect(await eventually(seconds: 15) { small.width == 160 && small.height == 120 && small.frames >= 30 })
            #expect(await eventually(seconds: 15) { large.width == 640 && large.height == 480 && large.frames >= 30 })
            let sent = { await alice.statistics(published.id)?.layerPacketsSent ?? [:] }
            #expect(await Set(sent().keys) == ["q", "h", "f"])

            // Carol gone, bob takes the smallest alone: the two larger sizes are named unused and stop.
            try await carol.unsubscribe(published.id)
            #expect(await aliceEvents.wait(seconds: 15) { $0.contains(.unusedLayers(streamID: published.id, rids: ["h", "f"])) })
            try await Task.sleep(for: .milliseconds(300))  // what the media loop had in hand
            let paused = await sent()
            let frames = small.frames
            #expect(await eventually(seconds: 5) { small.frames >= frames + 20 })
            let later = await sent()
            #expect(later["h"] == paused["h"] && later["f"] == paused["f"], "paused sizes sent nothing: \(paused) then \(later)")
            #expect((later["q"] ?? 0) > (paused["q"] ?? 0))

            // Bob asks for the largest: every size is wanted again, sent again from a key frame, and he gets it.
            try await bob.setPreferredResolution(published.id, nil)
            #expect(await aliceEvents.wait(seconds: 10) { $0.contains(.unusedLayers(streamID: published.id, rids: [])) })
            #expect(await eventually(seconds: 15) { small.width == 640 && small.height == 480 })
            let resumed = await sent()
            #expect((resumed["f"] ?? 0) > (later["f"] ?? 0) && (resumed["h"] ?? 0) > (later["h"] ?? 0))
            await carol.disconnect()
            await bob.disconnect()
            await alice.disconnect()
        }
    }

    @Test("a dropped socket: the client connects again, publishes and subscribes again by itself (with what it asked of each stream), and video flows both ways again")
    func reconnect() async throws {
        try await LiveServer.with { live in
            let (sid, tokens) = try await videoSessionAndTokens(live, roles: [("publisher", "alice"), ("publisher", "bob")])
            let alice = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[0])
            let aliceEvents = Collector(alice.events())
            let bob = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[1])
            let bobEvents = Collector(bob.events())
            let alicePublished = try await alice.publish(name: "alice-cam", video: try IVFFileSource(path: fixtureIVF))
            // Bob's own link judged too (the publisher audio fallback): on loopback it carries his video, and his stream
            // is published again with it after the drop.
            let bobPublished = try await bob.publish(name: "bob-cam", audio: ToneSource(frequency: 440), video: try IVFFileSource(path: fixtureIVF),
                                                     audioFallback: true)
            let aliceSees = VideoFrameCounter()
            let aliceHears = LevelMeter()
            let bobSees = VideoFrameCounter()
            try await alice.subscribe(bobPublished.id, audio: aliceHears, video: aliceSees)
            try await bob.subscribe(alicePublished.id, video: bobSees)
            #expect(await eventually(seconds: 15) { aliceSees.frames >= 20 && bobSees.frames >= 20 })
            // Alice stops taking bob's audio: asked again when she subscribes again after the drop.
            try await alice.subscribeToAudio(bobPublished.id, false)

            // The network drops alice's socket (the server sees it close without video:disconnect).
            let before = alice.connectionID
            let gateway = live.server.gateway
            let hub = live.server.live.video
            let socket = try #require(gateway.state.withLock { s in
                s.requests.keys.first { hub.connection(for: ClientID(rawValue: $0.id))?.id == before }
            })
            socket.close(code: 1006, reason: "")
            #expect(await aliceEvents.wait { $0.contains(.reconnecting) })
            #expect(await aliceEvents.wait(seconds: 20) { $0.contains { if case .reconnected = $0 { true } else { false } } })
            #expect(alice.connectionID != before)
            // Bob sees alice's old stream go and her stream published again; he subscribes to it as an app would.
            #expect(await bobEvents.wait { $0.contains { if case .streamDestroyed(let s, "networkDisconnected") = $0 { s.id == alicePublished.id } else { false } } })
            let republished = try #require(await bobEvents.wait(seconds: 15) { events in
                events.contains { if case .streamCreated(let s) = $0 { s.name == "alice-cam" && s.id != alicePublished.id } else { false } }
            } ? bobEvents.all.compactMap { if case .streamCreated(let s) = $0, s.name == "alice-cam" { s } else { nil } }.last : nil)
            let bobSeesAgain = VideoFrameCounter()
            try await bob.subscribe(republished.id, video: bobSeesAgain)
            // Alice subscribed again to bob's stream by herself: her counter keeps rising.
            let aliceBefore = aliceSees.frames
            #expect(await eventually(seconds: 15) { bobSeesAgain.frames >= 20 && aliceSees.frames >= aliceBefore + 20 },
                    "bob \(bobSeesAgain.frames), alice \(aliceSees.frames - aliceBefore)")
            let heard = aliceHears.levels[bobPublished.id]?.frames ?? 0
            let seen = aliceSees.frames
            #expect(await eventually(seconds: 5) { aliceSees.frames >= seen + 20 })
            #expect((aliceHears.levels[bobPublished.id]?.frames ?? 0) == heard, "bob's audio is still not taken")
            try await alice.subscribeToAudio(bobPublished.id, true)
            #expect(await eventually(seconds: 10) { (aliceHears.levels[bobPublished.id]?.frames ?? 0) >= heard + 25 })
            #expect(await alice.statistics(alicePublished.id)?.connected == true, "the id publish returned names the new stream here")
            try await alice.unpublish(alicePublished.id)
            #expect(await bobEvents.wait { $0.contains { if case .streamDestroyed(let s, _) = $0 { s.id == republished.id } else { false } } })
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("live captions: a stream published with captions on, its captions asked for by another client, partial then final ones arrive while it speaks")
    func captions() async throws {
        try await LiveServer.with { live in
            let (sid, tokens) = try await videoSessionAndTokens(live, roles: [("publisher", "alice"), ("subscriber", "bob")])
            // Alice says one sentence over and over, 1.5 s of silence after each saying (espeak-ng's f2 variant).
            let said = try await SpeechSynthesizer(workers: 1).synthesize(SpeechRequest(text: "please call me tomorrow morning", style: 1), rate: .hz48000)
            let loop = said + [AudioFrame](repeating: AudioFrame(rate: .hz48000), count: 75)
            let next = Atomic<Int>(0)
            let voice = CallbackSource { frame in
                frame = loop[next.wrappingAdd(1, ordering: .relaxed).oldValue % loop.count]
                return true
            }
            let alice = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[0])
            let bob = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[1])
            let bobEvents = Collector(bob.events())
            // Carol is the video chat app's view model, asking for every stream's captions as it connects.
            let carol = await VideoChatViewModel()
            await carol.connect(server: live.url, sessionID: sid, token: tokens[1], captions: true)
            let published = try await alice.publish(name: "alice-mic", audio: voice, publishCaptions: true)
            try await bob.subscribeToCaptions(published.id)
            let client = RESTClient(base: live.url, token: { "" }, caFile: nil)
            let started = try await client.call(.POST, "/video/api/captions", body: ["sessionId": .string(sid)])
            let captionsID = try #require(started["captionsId"]?.stringValue)

            func captions() -> [(text: String, isFinal: Bool)] {
                bobEvents.all.compactMap { if case .captionReceived(published.id, let text, let isFinal) = $0 { (text, isFinal) } else { nil } }
            }
            #expect(await eventually(seconds: 20) { captions().filter(\.isFinal).count >= 2 }, "\(captions())")
            let heard = Set(captions().filter(\.isFinal).flatMap { $0.text.split(separator: " ").map(String.init) })
            #expect(heard.intersection(["please", "call", "me", "tomorrow", "morning"]).count >= 3, "\(captions())")
            #expect(captions().first?.isFinal == false, "a partial caption comes first: \(captions())")
            #expect(await eventually { await carol.captions[published.id]?.text.isEmpty == false }, "the view model shows them too")

            // Alice turns her captions off: a last caption of what she was saying at most, then none.
            try await alice.setPublishCaptions(published.id, false)
            try await Task.sleep(for: .seconds(1.5))
            let count = captions().count
            try await Task.sleep(for: .seconds(4))
            #expect(captions().count == count, "\(captions())")
            _ = try await client.call(.POST, "/video/api/captions/stop", body: ["id": .string(captionsID)])
            await carol.disconnect()
            await alice.disconnect()
            await bob.disconnect()
        }
    }

    @Test("a relayed session: the SDK's own media goes peer to peer, each subscriber its own connection from the publisher (a mesh), heard and seen by both; unsubscribing closes one")
    func relayedMedia() async throws {
        try await LiveServer.with { live in
            let client = RESTClient(base: live.url, token: { "" }, caFile: nil)
            let made = try await client.call(.POST, "/video/api/session", body: ["mediaMode": "relayed"])
            let sid = try #require(made["sessionId"]?.stringValue)
            func join(_ name: String) async throws -> SwitchboardClient.VideoSession {
                let t = try await client.call(.POST, "/video/api/token", body: ["sessionId": .string(sid), "role": "publisher", "data": .string("name=\(name)")])
                return try await .connect(to: live.url, sessionID: sid, token: try #require(t["token"]?.stringValue), mediaAddress: "127.0.0.1")
            }
            let alice = try await join("alice"), bob = try await join("bob"), carol = try await join("carol")
            let sessions = [alice, bob, carol]
            #expect(alice.relayed)
            let stream = try await alice.publish(name: "alice-cam", audio: ToneSource(frequency: 440), video: try IVFFileSource(path: fixtureIVF))
            let meters = [LevelMeter(), LevelMeter()], counters = [VideoFrameCounter(), VideoFrameCounter()]
            for (i, viewer) in [bob, carol].enumerated() {
                try await viewer.subscribe(stream.id, audio: meters[i], video: counters[i])
            }
            for i in 0..<2 {
                #expect(await eventually(seconds: 15) { counters[i].frames >= 30 && (meters[i].levels[stream.id]?.frames ?? 0) > 25 },
                        "viewer \(i): \(counters[i].frames) frames, \(meters[i].levels)")
                #expect(abs((meters[i].levels[stream.id]?.frequency ?? 0) - 440) < 40)
                #expect(counters[i].width == 320 && counters[i].height == 240)
            }
            let sent = try #require(await alice.statistics(stream.id))
            #expect(sent.connected && sent.packetsSent > 0)
            // Carol leaves the stream: her connection closes; bob's goes on.
            try await carol.unsubscribe(stream.id)
            let carolFrames = counters[1].frames, bobFrames = counters[0].frames
            #expect(await eventually(seconds: 10) { counters[0].frames >= bobFrames + 20 })
            #expect(counters[1].frames <= carolFrames + 5)
            for s in sessions { await s.disconnect() }
        }
    }

    @Test("a relayed session: an app's WebRTC stack gets each subscriber, description and candidate through the SDK; the ICE servers come with the connection")
    func relayed() async throws {
        let ice = try ICEServers(parsing: "stun:127.0.0.1:3478,turn:127.0.0.1:3478?transport=udp", secret: "shared")
        try await LiveServer.with(iceServers: ice) { live in
            let client = RESTClient(base: live.url, token: { "" }, caFile: nil)
            let made = try await client.call(.POST, "/video/api/session", body: ["mediaMode": "relayed"])
            let sid = try #require(made["sessionId"]?.stringValue)
            var tokens: [String] = []
            for name in ["alice", "bob"] {
                let t = try await client.call(.POST, "/video/api/token", body: ["sessionId": .string(sid), "role": "publisher", "data": .string("name=\(name)")])
                tokens.append(try #require(t["token"]?.stringValue))
            }
            let alice = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[0])
            let aliceEvents = Collector(alice.events())
            let bob = try await VideoSession.connect(to: live.url, sessionID: sid, token: tokens[1])
            let bobEvents = Collector(bob.events())
            #expect(alice.relayed && bob.relayed)
            #expect(alice.iceServers.map(\.urls) == [["stun:127.0.0.1:3478"], ["turn:127.0.0.1:3478?transport=udp"]])
            #expect(alice.iceServers[1].username?.hasSuffix(":" + alice.connectionID) == true && alice.iceServers[1].credential != nil)
            let stream = try await alice.publishRelayed(name: "alice-cam")
            #expect(await bobEvents.wait { $0.contains { if case .streamCreated(let s) = $0 { s.id == stream.id } else { false } } })
            let me = try await bob.subscribeRelayed(stream.id)
            #expect(me == bob.connectionID)
            #expect(await aliceEvents.wait { $0.contains(.relay(streamID: stream.id, subscriberID: me, .subscribe)) })
            try await alice.relay(streamID: stream.id, subscriberID: me, .description(type: "offer", sdp: "v=0\r\n"))
            #expect(await bobEvents.wait { $0.contains(.relay(streamID: stream.id, subscriberID: me, .description(type: "offer", sdp: "v=0\r\n"))) })
            let candidate = ICECandidate(candidate: "candidate:1 1 udp 2122260223 127.0.0.1 50000 typ host", sdpMid: "0", sdpMLineIndex: 0)
            try await bob.relay(streamID: stream.id, subscriberID: me, .candidate(candidate))
            #expect(await aliceEvents.wait { $0.contains(.relay(streamID: stream.id, subscriberID: me, .candidate(candidate))) })
            try await bob.unsubscribe(stream.id)
            #expect(await aliceEvents.wait { $0.contains(.relay(streamID: stream.id, subscriberID: me, .end)) })
            await alice.disconnect()
            await bob.disconnect()
        }
    }
}

@Suite("Video events")
struct VideoEventTests {
    @Test("the server's audio fallback and unused-size pushes decode as events; unknown ones are left out")
    func audioFallback() throws {
        func decode(_ type: String, _ body: JSONValue) -> VideoEvent? { VideoEvent(push: ["type": .string(type), "body": body]) }
        #expect(decode("video:videoDisableWarning", ["streamId": "s1"]) == .audioFallback(streamID: "s1", .videoDisableWarning))
        #expect(decode("video:videoDisableWarningLifted", ["streamId": "s1"]) == .audioFallback(streamID: "s1", .videoDisableWarningLifted))
        #expect(decode("video:videoDisabled", ["streamId": "s1", "reason": "quality"]) == .audioFallback(streamID: "s1", .videoDisabled))
        #expect(decode("video:videoEnabled", ["streamId": "s1", "reason": "quality"]) == .audioFallback(streamID: "s1", .videoEnabled))
        #expect(decode("video:videoDisabled", [:]) == nil, "no stream id")
        #expect(decode("video:streamMuted", ["streamId": "s1"]) == nil, "a push the SDK does not know")
        // A publisher's own: its events, and whether to send its video now (no event: a silent try, or its end).
        #expect(decode("video:publisherAudioFallback", ["streamId": "s1", "event": "videoDisabled", "reason": "quality", "sendVideo": false])
                == .publisherAudioFallback(streamID: "s1", .videoDisabled, sendVideo: false))
        #expect(decode("video:publisherAudioFallback", ["streamId": "s1", "sendVideo": true]) == .publisherAudioFallback(streamID: "s1", nil, sendVideo: true))
        #expect(decode("video:publisherAudioFallback", ["streamId": "s1", "event": "videoDisabled"]) == nil, "no sendVideo")
        // A simulcast publisher's sizes no one takes.
        #expect(decode("video:unusedLayers", ["streamId": "s1", "rids": ["h", "f"]]) == .unusedLayers(streamID: "s1", rids: ["h", "f"]))
        #expect(decode("video:unusedLayers", ["streamId": "s1", "rids": []]) == .unusedLayers(streamID: "s1", rids: []))
        #expect(decode("video:unusedLayers", ["streamId": "s1"]) == nil, "no rids")
    }
}
