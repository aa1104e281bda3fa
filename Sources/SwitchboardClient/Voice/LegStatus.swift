/// A call leg's status, as `leg:status:update` events and the Voice API's event webhooks carry it.
public enum LegStatus: String, Sendable, Hashable {
    case started, ringing, answered, machine, completed, busy, cancelled, failed, rejected, timeout, unanswered, disconnected

    /// The leg is over.
    public var isTerminal: Bool {
        switch self {
        case .started, .ringing, .answered, .machine: false
        default: true
        }
    }
}
