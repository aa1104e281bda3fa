import Wire

/// What the user agent tells its owner about calls.
public enum CallEvent: Hashable, Sendable {
    /// A new inbound call: answer with `UserAgentCore.answer` or refuse with `reject`.
    case incomingCall(CallID, from: SIPAddress, to: SIPAddress, offer: SessionDescription?)
    /// The outbound call got a provisional response (early media when `answer` is set).
    case progress(CallID, status: Int, answer: SessionDescription?)
    /// The call is up: the 2xx was acknowledged (inbound) or received (outbound).
    case connected(CallID, remote: SessionDescription?)
    /// The peer changed the session (hold, resume) with a re-INVITE or UPDATE we answered.
    case updated(CallID, remote: SessionDescription)
    /// The peer pressed a key and said so in a SIP INFO (`InfoDTMF`), not in the media.
    case digit(CallID, Character)
    /// The call is over: `status` is the final response for failed set-ups, nil for BYE and CANCEL.
    case ended(CallID, status: Int?, reason: String)
}
