/// Why an answered (or placed) call ended for this user.
public enum CallHangupReason: Sendable, Hashable {
    /// This user hung up (from this session).
    case localHangup
    /// The other side, or the application through the API, ended it.
    case remoteHangup
    /// The callee rejected the call this user placed.
    case remoteReject
    /// The callee did not answer in time.
    case remoteNoAnswerTimeout
    case other(String)

    init(_ wire: String) {
        switch wire {
        case "localHangup": self = .localHangup
        case "remoteHangup": self = .remoteHangup
        case "remoteReject": self = .remoteReject
        case "remoteNoAnswerTimeout": self = .remoteNoAnswerTimeout
        default: self = .other(wire)
        }
    }

    public var wireName: String {
        switch self {
        case .localHangup: "localHangup"
        case .remoteHangup: "remoteHangup"
        case .remoteReject: "remoteReject"
        case .remoteNoAnswerTimeout: "remoteNoAnswerTimeout"
        case .other(let s): s
        }
    }
}
