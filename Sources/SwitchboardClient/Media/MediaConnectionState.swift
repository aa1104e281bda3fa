/// Where a conversation's (or a call's) media stands while the session's socket comes and goes.
/// The server frees a member's media when its socket closes; `RoomMedia` publishes and subscribes
/// again by itself once the session is back.
public enum MediaConnectionState: Sendable, Hashable {
    /// The session's socket dropped: no audio flows until it is back.
    case reconnecting
    /// Published and subscribed again on the new socket (`attempt` counts the media restarts).
    case reconnected(attempt: Int)
    /// Media is over: turned off (`.closed`), or the session ended or the restart was refused.
    case disconnected(SessionError)
}
