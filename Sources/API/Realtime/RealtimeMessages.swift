/// The `session:*` requests a client sends (docs/protocol.md, "Messages").
enum SessionRequest: String, Sendable {
    case login = "session:login"
    case resume = "session:resume"
    case refresh = "session:refresh"
    case ping = "session:ping"
    case logout = "session:logout"
}

/// The realtime protocol's own error codes; errors from the REST layer keep theirs, spelled in camelCase
/// (`RealtimeGateway.realtimeCode`).
enum RealtimeErrorCode: String, Sendable {
    case invalidMessage
    case unknownType
    case notLoggedIn
    case invalidToken
    case tokenExpired
    case forbidden
    case invalidSession
    case tooManyRequests
    case pingTimeout
    case loginTimeout

    /// The close code of the errors that end a session (docs/protocol.md, "Close codes").
    var closeCode: UInt16? {
        switch self {
        case .tokenExpired: 4001
        case .pingTimeout: 4002
        case .loginTimeout: 4003
        default: nil
        }
    }
}
