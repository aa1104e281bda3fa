/// What happens to the calls of a session's user, in the order the socket delivered it.
public enum CallEvent: Sendable, Hashable {
    /// A call rings this user.
    case invite(CallInvite)
    /// An invite stopped ringing here.
    case inviteCancelled(CallID, reason: CallInviteCancelReason)
    /// A call of this user ended.
    case hangup(CallID, reason: CallHangupReason)
    /// A leg of a call the user is in changed status (this user's own legs and the other side's).
    case legStatus(LegStatusUpdate)
    /// The server moved the user's call into another conversation (an NCCO `conversation`): its audio
    /// meets there from now on (`Voice.enableMedia(inCallConversation:)`).
    case transferred(CallID, conversationID: String)

    /// The call the event is about (the leg, for status updates).
    public var callID: CallID {
        switch self {
        case .invite(let i): i.callID
        case .inviteCancelled(let id, _), .hangup(let id, _), .transferred(let id, _): id
        case .legStatus(let u): u.legID
        }
    }
}
