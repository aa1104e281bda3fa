import Foundation
import Platform
import Testing
import Wire
@testable import SwitchboardClient

/// A live server whose application answers every server call with `ncco` (hooks on 127.0.0.1), and
/// logged-in sessions for alice and bob.
struct VoiceRig {
    let live: LiveServer
    let hooks: VoiceHooks
    let alice: Session
    let bob: Session

    static func make(ncco: JSONValue) async throws -> VoiceRig {
        let hooks = try VoiceHooks(ncco: ncco)
        let live = try LiveServer()
        do {
            _ = try live.server.core.applications.update(id: live.applicationID, apiKey: live.server.account.0.apiKey,
                                                         input: ApplicationInput(capabilities: hooks.capabilities))
            let alice = try await Session.connect(to: live.url, token: live.userToken("alice"))
            let bob = try await Session.connect(to: live.url, token: live.userToken("bob"))
            return VoiceRig(live: live, hooks: hooks, alice: alice, bob: bob)
        } catch {
            await live.stop()
            await hooks.stop()
            throw error
        }
    }

    func stop() async {
        await alice.logout()
        await bob.logout()
        await live.stop()
        await hooks.stop()
    }

    static func with(ncco: JSONValue, _ body: (VoiceRig) async throws -> Void) async throws {
        let rig = try await make(ncco: ncco)
        do {
            try await body(rig)
        } catch {
            await rig.stop()
            throw error
        }
        await rig.stop()
    }
}

let connectBob: JSONValue = [["action": "connect", "endpoint": [["type": "app", "user": "bob"]]]]

func invite(_ events: [CallEvent]) -> CallInvite? {
    for case .invite(let i) in events { return i }
    return nil
}

func sawStatus(_ events: [CallEvent], leg: CallID, _ status: LegStatus) -> Bool {
    events.contains { if case .legStatus(let u) = $0 { u.legID == leg && u.status == status } else { false } }
}

@Suite("Voice calls through the SDK against a live server", .serialized)
struct VoiceTests {
    @Test("server call to an app user: invite, answer, both answered, mute and DTMF, caller hangs up, both hear it, webhooks in order")
    func answeredCall() async throws {
        try await VoiceRig.with(ncco: connectBob) { rig in
            let aliceEvents = Collector(rig.alice.voice.events())
            let bobEvents = Collector(rig.bob.voice.events())
            let call = try await rig.alice.voice.serverCall(to: "bob", context: ["topic": "standup"])

            #expect(await bobEvents.wait { invite($0) != nil })
            let ringing = try #require(invite(bobEvents.all))
            #expect(ringing.from == "alice" && ringing.fromType == "app")
            #expect(ringing.callID != call)
            let answerRequest = try #require(rig.hooks.answers.first)
            #expect(answerRequest["to"]?.stringValue == "bob")
            #expect(answerRequest["from_user"]?.stringValue == "alice")
            #expect(answerRequest["custom_data"]?["topic"]?.stringValue == "standup")
            #expect(answerRequest["uuid"]?.stringValue == call.rawValue)

            try await rig.bob.voice.answer(ringing.callID)
            #expect(await aliceEvents.wait { sawStatus($0, leg: ringing.callID, .answered) })
            #expect(await bobEvents.wait { sawStatus($0, leg: ringing.callID, .answered) })
            // The answering session is told its other sessions stop ringing.
            #expect(await bobEvents.wait { $0.contains(.inviteCancelled(ringing.callID, reason: .answeredElsewhere)) })

            try await rig.alice.voice.setMuted(true, call: call)
            try await rig.alice.voice.setEarmuffed(true, call: call)
            try await rig.alice.voice.sendDTMF("12#", call: call)
            await #expect(throws: SessionError.self) { try await rig.alice.voice.sendDTMF("12x", call: call) }
            // Another user's leg is not alice's to hang up.
            await #expect(throws: SessionError.self) { try await rig.alice.voice.hangup(ringing.callID) }

            try await rig.alice.voice.hangup(call)
            #expect(await aliceEvents.wait { $0.contains(.hangup(call, reason: .localHangup)) })
            #expect(await bobEvents.wait { $0.contains(.hangup(ringing.callID, reason: .remoteHangup)) })
            #expect(await eventually { rig.hooks.statuses(call) == ["started", "ringing", "answered", "completed"] },
                    "caller leg events: \(rig.hooks.statuses(call))")
            #expect(await eventually { rig.hooks.statuses(ringing.callID) == ["started", "ringing", "answered", "completed"] },
                    "callee leg events: \(rig.hooks.statuses(ringing.callID))")
            // Each end is reported once.
            try await Task.sleep(for: .milliseconds(300))
            #expect(aliceEvents.all.filter { if case .hangup = $0 { true } else { false } }.count == 1)
            #expect(bobEvents.all.filter { if case .hangup = $0 { true } else { false } }.count == 1)
        }
    }

    @Test("the caller's app restarts mid-call: a new session reconnects to the call, hears the callee again and hangs up")
    func reconnectCall() async throws {
        try await VoiceRig.with(ncco: connectBob) { rig in
            let bobEvents = Collector(rig.bob.voice.events())
            let placed = try await rig.alice.voice.place(to: "bob")
            #expect(await bobEvents.wait { invite($0) != nil })
            let ringing = try #require(invite(bobEvents.all))
            try await rig.bob.voice.answer(ringing.callID)
            let bobHears = LevelMeter()
            let bobMedia = try await rig.bob.voice.enableMedia(inCallConversation: ringing.conversationID, source: ToneSource(frequency: 660), sink: bobHears)
            let first = try await rig.alice.voice.enableMedia(inCallConversation: placed.conversationID, source: ToneSource(frequency: 440), sink: nil)
            #expect(await eventually(seconds: 15) { bobHears.levels.values.contains { $0.frames > 25 } })
            await first.disable()

            // The app comes back with a new session of the same user and takes the call up again.
            let again = try await Session.connect(to: rig.live.url, token: rig.live.userToken("alice"))
            let againEvents = Collector(again.voice.events())
            await #expect(throws: SessionError.self) { _ = try await rig.bob.voice.reconnect(placed.callID, source: nil, sink: nil) }
            let aliceHears = LevelMeter()
            let media = try await again.voice.reconnect(placed.callID, source: ToneSource(frequency: 440), sink: aliceHears)
            #expect(await eventually(seconds: 15) { (aliceHears.levels[bobMedia.memberID]?.frames ?? 0) > 25 })
            #expect(abs((aliceHears.levels[bobMedia.memberID]?.frequency ?? 0) - 660) < 40)
            let before = bobHears.levels.values.map(\.frames).max() ?? 0
            #expect(await eventually(seconds: 15) { (bobHears.levels.values.map(\.frames).max() ?? 0) > before + 25 }, "bob hears alice again")

            try await again.voice.hangup(placed.callID)
            #expect(await againEvents.wait { $0.contains(.hangup(placed.callID, reason: .localHangup)) })
            #expect(await bobEvents.wait { $0.contains(.hangup(ringing.callID, reason: .remoteHangup)) })
            await #expect(throws: SessionError.self) { _ = try await again.voice.reconnect(placed.callID, source: nil, sink: nil) }
            await media.disable()
            await bobMedia.disable()
            await again.logout()
        }
    }

    @Test("the callee rejects: the caller's call ends as rejected, the callee leg reports rejected")
    func rejected() async throws {
        try await VoiceRig.with(ncco: connectBob) { rig in
            let aliceEvents = Collector(rig.alice.voice.events())
            let bobEvents = Collector(rig.bob.voice.events())
            let call = try await rig.alice.voice.serverCall(to: "bob")
            #expect(await bobEvents.wait { invite($0) != nil })
            let ringing = try #require(invite(bobEvents.all))
            try await rig.bob.voice.reject(ringing.callID)
            #expect(await bobEvents.wait { $0.contains(.inviteCancelled(ringing.callID, reason: .rejectedElsewhere)) })
            #expect(await aliceEvents.wait { $0.contains(.hangup(call, reason: .remoteReject)) }, "alice: \(aliceEvents.all)")
            #expect(await eventually { rig.hooks.statuses(ringing.callID) == ["started", "ringing", "rejected"] },
                    "callee leg events: \(rig.hooks.statuses(ringing.callID))")
            #expect(await eventually { rig.hooks.statuses(call).last == "completed" })
            // A rejected call cannot be answered any more.
            await #expect(throws: SessionError.self) { try await rig.bob.voice.answer(ringing.callID) }
        }
    }

    @Test("nobody answers: the invite is cancelled with remoteTimeout and the caller hears no answer")
    func unanswered() async throws {
        let ncco: JSONValue = [["action": "connect", "timeout": 3, "endpoint": [["type": "app", "user": "bob"]]]]
        try await VoiceRig.with(ncco: ncco) { rig in
            let aliceEvents = Collector(rig.alice.voice.events())
            let bobEvents = Collector(rig.bob.voice.events())
            let call = try await rig.alice.voice.serverCall(to: "bob")
            #expect(await bobEvents.wait { invite($0) != nil })
            let ringing = try #require(invite(bobEvents.all))
            #expect(await bobEvents.wait(seconds: 20) { $0.contains(.inviteCancelled(ringing.callID, reason: .remoteTimeout)) },
                    "bob: \(bobEvents.all)")
            #expect(await aliceEvents.wait(seconds: 20) { $0.contains(.hangup(call, reason: .remoteNoAnswerTimeout)) }, "alice: \(aliceEvents.all)")
            #expect(await eventually { rig.hooks.statuses(ringing.callID) == ["started", "ringing", "timeout"] },
                    "callee leg events: \(rig.hooks.statuses(ringing.callID))")
        }
    }

    @MainActor @Test("call view models: dial, ring, answer, a running timer, DTMF, the callee hangs up, both ended with why")
    func viewModels() async throws {
        let rig = try await VoiceRig.make(ncco: connectBob)
        defer { Task { await rig.stop() } }
        do {
            let alice = CallViewModel(session: rig.alice)
            let bob = CallViewModel(session: rig.bob)
            await alice.dial("bob")
            #expect(alice.state == .ringing(incoming: false) && alice.callID != nil)
            #expect(await poll { bob.state == .ringing(incoming: true) })
            #expect(bob.incoming?.from == "alice")
            await bob.answer()
            #expect(bob.state == .answered && bob.incoming == nil)
            #expect(await poll { alice.state == .answered })
            #expect(await poll { alice.elapsedSeconds >= 1 && bob.elapsedSeconds >= 1 })
            await alice.sendDTMF("5")
            await alice.setMuted(true)
            #expect(alice.digitsSent == "5" && alice.muted && alice.error == nil)
            await alice.sendDTMF("x")
            #expect(alice.error != nil && alice.digitsSent == "5")
            await bob.hangUp()
            #expect(await poll { bob.state == .ended(.hangup(.localHangup)) })
            #expect(await poll { alice.state == .ended(.hangup(.remoteHangup)) }, "alice: \(alice.state)")
            let seconds = alice.elapsedSeconds
            try await Task.sleep(for: .milliseconds(1300))
            #expect(alice.elapsedSeconds == seconds, "the timer stops when the call ends")

            // The next call is rejected from bob's screen.
            await alice.dial("bob")
            #expect(await poll { bob.state == .ringing(incoming: true) })
            await bob.reject()
            #expect(bob.state == .ended(.rejected))
            #expect(await poll { alice.state == .ended(.hangup(.remoteReject)) }, "alice: \(alice.state)")
        }
    }
}
