/// Where a call leg is in its life, named as the Voice API's event webhooks report it.
public enum CallStatus: String, Sendable, Hashable, CaseIterable {
    case started, ringing, answered, machine, completed, busy, cancelled, failed, rejected, timeout, unanswered, disconnected

    /// A leg in a terminal status never changes again.
    public var isTerminal: Bool {
        switch self {
        case .started, .ringing, .answered, .machine: false
        case .completed, .busy, .cancelled, .failed, .rejected, .timeout, .unanswered, .disconnected: true
        }
    }
}

/// Who placed the leg: the platform (`outbound`, REST or `connect`) or the far end (`inbound`).
public enum CallDirection: String, Sendable, Hashable {
    case inbound, outbound
}
