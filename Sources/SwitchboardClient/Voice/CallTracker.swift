import Wire

/// Turns what the realtime socket delivers (the `call:*` pushes and `leg:status:update` events) into
/// call events, each call's end reported once. Pure: the session's ledger comes in with each input.
///
/// The server pushes `call:hangup` only to a callee whose answered leg the other side ended. A caller's
/// own server call ends with its member leaving the call's conversation (`member:left`, which comes
/// before the leg's last `leg:status:update`, and that one no longer reaches a user who has left);
/// why it ended is the callee leg's last status there (rejected, timed out) or, after an answer, a
/// hangup from the far end.
struct CallTracker {
    /// Calls whose end has been reported.
    private(set) var ended: Set<CallID> = []
    /// The latest status of each leg seen, by conversation, to explain a caller's end.
    private var legsByConversation: [String: [CallID: LegStatus]] = [:]
    /// Each leg seen, by its member id (whether a leg is the user's own is known from the ledger, which
    /// may learn of a placed call only after the leg's first statuses).
    private var legsByMember: [String: CallID] = [:]
    /// Bounds the memory of a long-lived session: ended calls are forgotten past this many.
    let limit = 1024

    mutating func push(type: String, body: JSONValue, ledger: VoiceLedger) -> [CallEvent] {
        switch type {
        case "call:invite":
            return CallInvite(body: body).map { [.invite($0)] } ?? []
        case "call:invite:cancel":
            guard let id = body["call_id"]?.stringValue else { return [] }
            return [.inviteCancelled(CallID(id), reason: CallInviteCancelReason(body["reason"]?.stringValue ?? ""))]
        case "call:hangup":
            guard let id = body["call_id"]?.stringValue else { return [] }
            return end(CallID(id), reason: CallHangupReason(body["reason"]?.stringValue ?? "remoteHangup"))
        case "call:transfer":
            guard let id = body["call_id"]?.stringValue, let conversation = body["conversation_id"]?.stringValue else { return [] }
            // Its member leaving the call's conversation next is the move, not the call's end.
            if let member = body["member_id"]?.stringValue { legsByMember[member] = nil }
            return [.transferred(CallID(id), conversationID: conversation)]
        default:
            return []
        }
    }

    mutating func event(_ e: ConversationEvent, ledger: VoiceLedger) -> [CallEvent] {
        if e.type == "member:left" {
            guard let member = e.memberID, let id = legsByMember[member], ledger.placed.contains(id) || ledger.answered.contains(id) else { return [] }
            legsByMember[member] = nil
            return ended(id, conversation: e.conversationID, ledger: ledger)
        }
        guard let update = LegStatusUpdate(e) else { return [] }
        let out: [CallEvent] = [.legStatus(update)]
        let id = update.legID
        if legsByConversation[update.conversationID] == nil, legsByConversation.count >= limit { legsByConversation.removeAll() }
        legsByConversation[update.conversationID, default: [:]][id] = update.status
        if !update.status.isTerminal {
            if legsByMember.count >= limit { legsByMember.removeAll() }
            legsByMember[update.memberID] = id
            return out
        }
        legsByMember[update.memberID] = nil
        guard ledger.placed.contains(id) || ledger.answered.contains(id) else { return out }
        return out + ended(id, conversation: update.conversationID, ledger: ledger)
    }

    /// The user's own leg `id` is over: its hangup, with why, unless already reported.
    private mutating func ended(_ id: CallID, conversation: String, ledger: VoiceLedger) -> [CallEvent] {
        let reason: CallHangupReason
        if ledger.hangingUp.contains(id) {
            reason = .localHangup
        } else if ledger.answered.contains(id) {
            reason = .remoteHangup
        } else {
            let others = (legsByConversation[conversation] ?? [:]).filter { $0.key != id }.map(\.value)
            if others.contains(.answered) || others.contains(.completed) {
                reason = .remoteHangup
            } else if others.contains(.rejected) || others.contains(.busy) {
                reason = .remoteReject
            } else if others.contains(.timeout) || others.contains(.unanswered) {
                reason = .remoteNoAnswerTimeout
            } else {
                reason = .remoteHangup
            }
        }
        legsByConversation[conversation] = nil
        return end(id, reason: reason)
    }

    /// The local side hung up: reported now unless the call's end already was.
    mutating func localHangup(_ id: CallID) -> [CallEvent] { end(id, reason: .localHangup) }

    private mutating func end(_ id: CallID, reason: CallHangupReason) -> [CallEvent] {
        if ended.count >= limit { ended.removeAll() }
        guard ended.insert(id).inserted else { return [] }
        return [.hangup(id, reason: reason)]
    }
}
