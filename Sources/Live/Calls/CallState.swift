/// Where a call or a leg is in its life, named as the Voice API reports it.
///
/// A slot for telephony (a later issue): nothing sets these yet.
public enum CallState: String, Sendable, Hashable, CaseIterable {
    case started, ringing, answered, machine, completed, busy, cancelled, failed, rejected, timeout, unanswered
}
