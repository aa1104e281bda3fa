import Runtime
import Wire

/// A client transaction: INVITE (RFC 3261 §17.1.1, figure 5, with RFC 6026's Accepted state) or
/// non-INVITE (§17.1.2, figure 6), as a value that returns actions. Time comes in as `now`; the
/// owner calls `tick(now:)` at `nextDeadline`.
///
/// Requests are retransmitted only over unreliable transports (timers A and E). A non-2xx
/// final response to an INVITE is acknowledged here, with the ACK of §17.1.1.3; a 2xx is the
/// transaction user's to acknowledge, and its retransmissions are passed up while timer M runs.
public struct ClientTransaction: Sendable {
    public enum State: Hashable, Sendable { case calling, trying, proceeding, accepted, completed, terminated }

    public let key: TransactionKey
    public let request: SIPMessage
    public let isInvite: Bool
    public let reliable: Bool
    public let timers: SIPTimers
    public private(set) var state: State
    /// The ACK sent for a non-2xx final response, resent when that response is retransmitted.
    public private(set) var ack: SIPMessage?
    private var armed = TimerSet()

    public init(request: SIPMessage, reliable: Bool, timers: SIPTimers = .default) throws(SIPParseError) {
        guard let method = request.method else { throw SIPParseError(.invalidStartLine, "not a request") }
        guard let branch = try request.topVia().branch else { throw SIPParseError(.invalidVia, "request Via without branch") }
        self.key = .client(branch: branch, method: method)
        self.request = request
        self.isInvite = method == .invite
        self.reliable = reliable
        self.timers = timers
        self.state = isInvite ? .calling : .trying
    }

    /// The earliest armed timer, nil when none.
    public var nextDeadline: Instant? { armed.next }

    /// Whether `timer` is armed (for tests and diagnostics).
    public func isArmed(_ timer: TransactionTimer) -> Bool { armed.deadlines[timer] != nil }

    /// Sends the request and arms the timers.
    public mutating func start(now: Instant) -> [TransactionAction] {
        if isInvite {
            if !reliable { armed.arm(.a, after: timers.t1, now: now) }
            armed.arm(.b, after: timers.transactionTimeout, now: now)
        } else {
            if !reliable { armed.arm(.e, after: timers.t1, now: now) }
            armed.arm(.f, after: timers.transactionTimeout, now: now)
        }
        return [.send(request)]
    }

    public mutating func receive(_ response: SIPMessage, now: Instant) -> [TransactionAction] {
        guard let status = response.status else { return [] }
        if isInvite { return receiveInvite(response, status: status, now: now) }
        switch (state, status) {
        case (.trying, 100...199), (.proceeding, 100...199):
            state = .proceeding
            return [.deliver(response)]
        case (.trying, 200...699), (.proceeding, 200...699):
            state = .completed
            armed.cancelAll()
            if reliable { state = .terminated; return [.deliver(response), .terminated] }
            armed.arm(.k, after: timers.t4, now: now)
            return [.deliver(response)]
        default:
            // Retransmitted responses in Completed are absorbed.
            return []
        }
    }

    private mutating func receiveInvite(_ response: SIPMessage, status: Int, now: Instant) -> [TransactionAction] {
        switch (state, status) {
        case (.calling, 100...199), (.proceeding, 100...199):
            state = .proceeding
            armed.cancel(.a)
            return [.deliver(response)]
        case (.calling, 200...299), (.proceeding, 200...299):
            state = .accepted
            armed.cancelAll()
            armed.arm(.m, after: timers.transactionTimeout, now: now)
            return [.deliver(response)]
        case (.accepted, 200...299):
            // Each 2xx (retransmission or another fork) goes to the transaction user, which acknowledges it.
            return [.deliver(response)]
        case (.calling, 300...699), (.proceeding, 300...699):
            state = .completed
            armed.cancelAll()
            let ack = Self.ack(for: request, response: response)
            self.ack = ack
            if reliable {
                state = .terminated
                return [.send(ack), .deliver(response), .terminated]
            }
            armed.arm(.d, after: timers.timerD, now: now)
            return [.send(ack), .deliver(response)]
        case (.completed, 300...699):
            return ack.map { [.send($0)] } ?? []
        default:
            return []
        }
    }

    public mutating func tick(now: Instant) -> [TransactionAction] {
        var actions: [TransactionAction] = []
        for timer in armed.due(now: now) {
            switch timer {
            case .a where state == .calling:
                let next = (armed.intervals[.a] ?? timers.t1) * 2
                armed.arm(.a, after: next, now: now)
                actions.append(.send(request))
            case .e where state == .trying || state == .proceeding:
                let next = state == .proceeding ? timers.t2 : min((armed.intervals[.e] ?? timers.t1) * 2, timers.t2)
                armed.arm(.e, after: next, now: now)
                actions.append(.send(request))
            case .b, .f:
                armed.cancelAll()
                state = .terminated
                actions += [.timeout, .terminated]
            case .d, .k, .m:
                armed.cancelAll()
                state = .terminated
                actions.append(.terminated)
            default:
                break
            }
        }
        return actions
    }

    /// The transport could not send the request (§17.1.1.2, §17.1.2.2): the transaction ends.
    public mutating func transportFailed() -> [TransactionAction] {
        guard state != .terminated else { return [] }
        armed.cancelAll()
        state = .terminated
        return [.timeout, .terminated]
    }

    /// The ACK for a non-2xx final response (RFC 3261 §17.1.1.3).
    public static func ack(for request: SIPMessage, response: SIPMessage) -> SIPMessage {
        var h = SIPHeaders()
        if let top = try? request.topVia() { h.add(SIPHeaderName.via, top.description) }
        h.add(SIPHeaderName.maxForwards, "70")
        if let from = request.headers[SIPHeaderName.from] { h.add(SIPHeaderName.from, from) }
        if let to = response.headers[SIPHeaderName.to] { h.add(SIPHeaderName.to, to) }
        if let callID = request.callID { h.add(SIPHeaderName.callID, callID) }
        let sequence = (try? request.cseq().sequence) ?? 0
        h.add(SIPHeaderName.cseq, SIPCSeq(sequence, .ack).description)
        for route in request.headers.values(SIPHeaderName.route) { h.add(SIPHeaderName.route, route) }
        let uri = request.requestURI ?? SIPURI(host: "invalid")
        return .request(.ack, uri, headers: h)
    }
}
