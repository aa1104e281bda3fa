/// Where a session's connection stands; `Session.states()` reports every change.
public enum ConnectionState: Sendable, Hashable {
    /// Logged in, on a live socket. `resumed` is true after a reconnect that kept the session;
    /// `replayed` counts the events the server sent again for the gap.
    case connected(resumed: Bool, replayed: Int)
    /// The socket went away for `reason`; attempt `attempt` follows after a backoff delay.
    case reconnecting(reason: SessionError, attempt: Int)
    /// The session is over: logged out (`.closed`), or ended by the server (`.tokenExpired`, …).
    case disconnected(SessionError)
}
