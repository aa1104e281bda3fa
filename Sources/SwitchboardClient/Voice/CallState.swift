/// Where a call stands, as a call screen shows it.
public enum CallState: Sendable, Hashable {
    case idle
    /// The request to place the call is on its way.
    case dialing
    /// Placed and ringing the callee (outgoing), or ringing this user (incoming).
    case ringing(incoming: Bool)
    case answered
    case ended(CallEndReason)
}

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
