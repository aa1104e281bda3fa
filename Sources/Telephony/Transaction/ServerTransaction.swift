import Runtime
import Wire

/// A server transaction: INVITE (RFC 3261 §17.2.1, figure 7, with RFC 6026's Accepted state) or
/// non-INVITE (§17.2.2, figure 8), as a value that returns actions.
///
/// Retransmitted requests are absorbed: the last response is sent again, or nothing before one
/// exists. Over unreliable transports a final INVITE response is retransmitted (timer G for
/// non-2xx; for 2xx the UAS core's doubling interval of §13.3.1.4, kept here with the transaction
/// so one object owns every retransmission of the INVITE) until the ACK arrives.
public struct ServerTransaction: Sendable {
    public enum State: Hashable, Sendable { case trying, proceeding, accepted, completed, confirmed, terminated }

    public let key: TransactionKey
    public let request: SIPMessage
    public let isInvite: Bool
    public let reliable: Bool
    public let timers: SIPTimers
    public private(set) var state: State
    public private(set) var lastResponse: SIPMessage?
    /// Whether the ACK for a 2xx has arrived.
    public private(set) var acknowledged = false
    private var armed = TimerSet()

    public init(request: SIPMessage, reliable: Bool, timers: SIPTimers = .default) throws(SIPParseError) {
        self.key = try TransactionKey.server(for: request)
        self.request = request
        self.isInvite = request.method == .invite
        self.reliable = reliable
        self.timers = timers
        self.state = isInvite ? .proceeding : .trying
    }

    public var nextDeadline: Instant? { armed.next }
    public func isArmed(_ timer: TransactionTimer) -> Bool { armed.deadlines[timer] != nil }

    /// The first arrival of the request: pass it up.
    public mutating func start() -> [TransactionAction] { [.deliver(request)] }

    /// A request that matched this transaction: a retransmission, or the ACK of a non-2xx response.
    public mutating func receive(_ request: SIPMessage, now: Instant) -> [TransactionAction] {
        if request.method == .ack {
            guard isInvite, state == .completed else { return [] }
            state = .confirmed
            armed.cancelAll()
            if reliable { state = .terminated; return [.terminated] }
            armed.arm(.i, after: timers.t4, now: now)
            return []
        }
        switch state {
        case .proceeding, .completed, .accepted:
            return lastResponse.map { [.send($0)] } ?? []
        default:
            return []
        }
    }

    /// The transaction user's response.
    public mutating func respond(_ response: SIPMessage, now: Instant) -> [TransactionAction] {
        guard let status = response.status, state == .trying || state == .proceeding else { return [] }
        lastResponse = response
        if status < 200 {
            state = .proceeding
            return [.send(response)]
        }
        if isInvite {
            if status < 300 {
                state = .accepted
                armed.arm(.l, after: timers.transactionTimeout, now: now)
                if !reliable { armed.arm(.okRetransmit, after: timers.t1, now: now) }
            } else {
                state = .completed
                if !reliable { armed.arm(.g, after: timers.t1, now: now) }
                armed.arm(.h, after: timers.transactionTimeout, now: now)
            }
            return [.send(response)]
        }
        state = .completed
        if reliable {
            state = .terminated
            return [.send(response), .terminated]
        }
        armed.arm(.j, after: timers.transactionTimeout, now: now)
        return [.send(response)]
    }

    /// The ACK for our 2xx arrived (it is a separate transaction; the UA core routes it here).
    public mutating func acknowledge2xx() {
        acknowledged = true
        armed.cancel(.okRetransmit)
    }

    public mutating func tick(now: Instant) -> [TransactionAction] {
        var actions: [TransactionAction] = []
        for timer in armed.due(now: now) {
            switch timer {
            case .g where state == .completed, .okRetransmit where state == .accepted && !acknowledged:
                let next = min((armed.intervals[timer] ?? timers.t1) * 2, timers.t2)
                armed.arm(timer, after: next, now: now)
                if let lastResponse { actions.append(.send(lastResponse)) }
            case .h:
                armed.cancelAll()
                state = .terminated
                actions += [.timeout, .terminated]
            case .l:
                armed.cancelAll()
                state = .terminated
                if !acknowledged { actions.append(.timeout) }
                actions.append(.terminated)
            case .i, .j:
                armed.cancelAll()
                state = .terminated
                actions.append(.terminated)
            default:
                break
            }
        }
        return actions
    }
}
