import Testing
import Wire
@testable import SwitchboardClient

/// The call tracker alone: conversation events and pushes in, call events out.
@Suite("Call tracker turns pushes and leg events into call events")
struct CallTrackerTests {
    static let caller = CallID("leg-caller")
    static let callee = CallID("leg-callee")

    static func status(_ id: Int, leg: CallID, member: String, _ status: String) -> ConversationEvent {
        ConversationEvent(json: ["id": .number(Double(id)), "type": "leg:status:update", "conversation_id": "CON-1", "from": .string(member),
                                 "body": ["leg_id": .string(leg.rawValue), "status": .string(status), "type": "app",
                                          "direction": "outbound", "conversation_id": "CON-1", "member_id": .string(member)]])!
    }

    static func left(_ id: Int, member: String) -> ConversationEvent {
        ConversationEvent(json: ["id": .number(Double(id)), "type": "member:left", "conversation_id": "CON-1", "from": .string(member),
                                 "body": ["member_id": .string(member)]])!
    }

    static func hangups(_ events: [CallEvent]) -> [CallEvent] {
        events.filter { if case .hangup = $0 { true } else { false } }
    }

    /// The caller's view of a call whose callee leg ends with `calleeEnd`, then the caller's member leaves.
    static func callerEnd(calleeEnd: [String], ledger: VoiceLedger) -> [CallEvent] {
        var t = CallTracker()
        return callerEnd(&t, calleeEnd: calleeEnd, ledger: ledger)
    }

    static func callerEnd(_ t: inout CallTracker, calleeEnd: [String], ledger: VoiceLedger) -> [CallEvent] {
        var out: [CallEvent] = []
        var n = 1
        for s in ["started", "ringing", "answered"] { out += t.event(status(n, leg: caller, member: "MEM-a", s), ledger: ledger); n += 1 }
        for s in ["started", "ringing"] + calleeEnd { out += t.event(status(n, leg: callee, member: "MEM-b", s), ledger: ledger); n += 1 }
        out += t.event(left(n, member: "MEM-a"), ledger: ledger)
        return out
    }

    @Test("a placed call's end has the callee's reason", arguments: [
        (["rejected"], CallHangupReason.remoteReject),
        (["busy"], .remoteReject),
        (["timeout"], .remoteNoAnswerTimeout),
        (["unanswered"], .remoteNoAnswerTimeout),
        (["answered", "completed"], .remoteHangup),
        ([], .remoteHangup),
    ])
    func placedCallEnds(calleeEnd: [String], reason: CallHangupReason) {
        let ledger = VoiceLedger(placed: [Self.caller])
        #expect(Self.hangups(Self.callerEnd(calleeEnd: calleeEnd, ledger: ledger)) == [.hangup(Self.caller, reason: reason)])
    }

    @Test("a call this side is hanging up ends as localHangup, once, whichever of the leave and the local report comes first")
    func localHangupOnce() {
        var ledger = VoiceLedger(placed: [Self.caller])
        ledger.hangingUp = [Self.caller]
        var t = CallTracker()
        var events = Self.callerEnd(&t, calleeEnd: ["answered"], ledger: ledger)
        events += t.localHangup(Self.caller)
        #expect(Self.hangups(events) == [.hangup(Self.caller, reason: .localHangup)])
        // A second tracker that hears the local report first.
        var u = CallTracker()
        var second = u.localHangup(Self.caller)
        second += u.push(type: "call:hangup", body: ["call_id": .string(Self.caller.rawValue), "reason": "localHangup"], ledger: ledger)
        #expect(second == [.hangup(Self.caller, reason: .localHangup)])
    }

    @Test("a call moved into another conversation is a transfer, not an end: its old member leaving reports nothing")
    func transfer() {
        let ledger = VoiceLedger(placed: [Self.caller])
        var t = CallTracker()
        var out = t.event(Self.status(1, leg: Self.caller, member: "MEM-a", "answered"), ledger: ledger)
        out += t.push(type: "call:transfer", body: ["call_id": .string(Self.caller.rawValue), "conversation_id": "CON-2", "member_id": "MEM-a"],
                      ledger: ledger)
        out += t.event(Self.left(2, member: "MEM-a"), ledger: ledger)
        #expect(out.dropFirst() == [.transferred(Self.caller, conversationID: "CON-2")])
        #expect(Self.hangups(out).isEmpty)
    }

    @Test("others' legs leaving and calls not this session's report no hangup")
    func notOurs() {
        var t = CallTracker()
        let ledger = VoiceLedger()
        var out = t.event(Self.status(1, leg: Self.caller, member: "MEM-a", "answered"), ledger: ledger)
        out += t.event(Self.left(2, member: "MEM-a"), ledger: ledger)
        out += t.event(Self.status(3, leg: Self.caller, member: "MEM-a", "completed"), ledger: ledger)
        #expect(Self.hangups(out).isEmpty)
        #expect(out.count == 2)
    }

    @Test("pushes: invite, cancel with each documented reason, a remote hangup reported once")
    func pushes() {
        var t = CallTracker()
        let ledger = VoiceLedger(answered: [Self.callee])
        let invite = t.push(type: "call:invite", body: ["call_id": "leg-callee", "conversation_id": "CON-1", "from": ["type": "app", "user": "alice"],
                                                        "channel_type": "app", "direction": "outbound"], ledger: ledger)
        #expect(invite.count == 1 && invite.first?.callID == Self.callee)
        if case .invite(let i)? = invite.first { #expect(i.from == "alice" && i.fromType == "app") }
        for reason in ["answeredElsewhere", "rejectedElsewhere", "remoteCancel", "remoteTimeout"] {
            let e = t.push(type: "call:invite:cancel", body: ["call_id": "leg-callee", "reason": .string(reason)], ledger: ledger)
            #expect(e == [.inviteCancelled(Self.callee, reason: CallInviteCancelReason(reason))])
            #expect(CallInviteCancelReason(reason).wireName == reason)
        }
        let first = t.push(type: "call:hangup", body: ["call_id": "leg-callee", "reason": "remoteHangup"], ledger: ledger)
        let again = t.event(Self.status(9, leg: Self.callee, member: "MEM-b", "completed"), ledger: ledger)
        #expect(first == [.hangup(Self.callee, reason: .remoteHangup)])
        #expect(Self.hangups(again).isEmpty)
        #expect(t.push(type: "call:invite", body: ["nothing": 1], ledger: ledger).isEmpty)
        #expect(t.push(type: "call:unknown", body: [:], ledger: ledger).isEmpty)
    }
}
