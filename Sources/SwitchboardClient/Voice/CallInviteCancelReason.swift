/// Why an invite stopped ringing before this session answered it (`call:invite:cancel`).
public enum CallInviteCancelReason: Sendable, Hashable {
    /// Another session of the same user answered.
    case answeredElsewhere
    /// Another session of the same user rejected.
    case rejectedElsewhere
    /// The caller hung up before anyone answered.
    case remoteCancel
    /// Nobody answered before the ringing timer ran out.
    case remoteTimeout
    case other(String)

    init(_ wire: String) {
        switch wire {
        case "answeredElsewhere": self = .answeredElsewhere
        case "rejectedElsewhere": self = .rejectedElsewhere
        case "remoteCancel": self = .remoteCancel
        case "remoteTimeout": self = .remoteTimeout
        default: self = .other(wire)
        }
    }

    public var wireName: String {
        switch self {
        case .answeredElsewhere: "answeredElsewhere"
        case .rejectedElsewhere: "rejectedElsewhere"
        case .remoteCancel: "remoteCancel"
        case .remoteTimeout: "remoteTimeout"
        case .other(let s): s
        }
    }
}
