/// Why a call screen's call ended.
public enum CallEndReason: Sendable, Hashable {
    case hangup(CallHangupReason)
    /// An incoming call stopped ringing before this user answered it here.
    case inviteCancelled(CallInviteCancelReason)
    /// This user rejected the incoming call.
    case rejected
    /// The server refused a request (placing, answering).
    case failed(SessionError)
}
