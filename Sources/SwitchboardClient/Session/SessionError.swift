/// Why a session could not start, a request failed, or a connection ended.
public enum SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token is malformed, wrongly signed, or names an unknown application or user.
    case invalidToken
    /// The token expired (at login), or the session ended because it did (`tokenExpired`, close 4001).
    case tokenExpired
    /// The token's ACL does not allow realtime sessions (or the REST path it was used on).
    case forbidden
    /// The server no longer knows the session (restarted, or the resume window passed).
    case invalidSession
    /// The server stopped hearing heartbeats (close 4002); the session resumes on reconnect.
    case pingTimeout
    /// The connection went away before an answer came.
    case transportClosed
    /// No answer within the request timeout.
    case timeout
    /// The session was logged out or closed by this client.
    case closed
    /// The server could not be reached (the connection or the WebSocket upgrade failed).
    case unreachable(String)
    /// Any other error the server answered: its code and detail (e.g. `notJoined`, `roomFull`, HTTP `room-full`).
    case server(code: String, detail: String)

    /// The typed error for a realtime error code (docs/protocol.md) or a REST error type.
    static func from(code: String, detail: String) -> SessionError {
        switch code {
        case "invalidToken", "invalid-token", "unauthorized": return .invalidToken
        case "tokenExpired", "token-expired": return .tokenExpired
        case "forbidden": return .forbidden
        case "invalidSession": return .invalidSession
        case "pingTimeout": return .pingTimeout
        default: return .server(code: code, detail: detail)
        }
    }

    /// The server's error code, for `.server`; nil for the other cases.
    public var code: String? {
        if case .server(let code, _) = self { return code }
        return nil
    }

    public var description: String {
        switch self {
        case .invalidToken: return "the token is not valid"
        case .tokenExpired: return "the token has expired"
        case .forbidden: return "the token does not allow this"
        case .invalidSession: return "the session is unknown or expired"
        case .pingTimeout: return "the server stopped hearing from this client (ping timeout)"
        case .transportClosed: return "the connection to the server closed"
        case .timeout: return "the server did not answer in time"
        case .closed: return "the session is closed"
        case .unreachable(let why): return "the server could not be reached: \(why)"
        case .server(let code, let detail): return detail.isEmpty ? code : "\(code): \(detail)"
        }
    }
}
