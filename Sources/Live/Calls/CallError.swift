/// Why a request on a call was refused.
public enum CallError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call has ended (or never ran on this server): nothing can change it.
    case notLive
    /// The caller is not the user the leg rings or belongs to.
    case notYours
    /// The request does not fit the leg's state (answering a leg that is not ringing).
    case wrongState(String)
    /// Media the request needs is not available.
    case media(CallMediaError)

    public var description: String {
        switch self {
        case .notLive: "the call is not in progress"
        case .notYours: "the call is not this user's"
        case .wrongState(let why): why
        case .media(let e): e.description
        }
    }
}
