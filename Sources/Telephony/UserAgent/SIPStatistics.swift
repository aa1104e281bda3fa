import Wire

/// Counts of SIP messages by direction, method and status code, for `/metrics`.
public struct SIPStatistics: Hashable, Sendable {
    public struct Key: Hashable, Sendable {
        public var direction: String
        public var method: String
        /// 0 for requests.
        public var status: Int
    }

    public private(set) var requests: [Key: Int] = [:]
    public private(set) var responses: [Key: Int] = [:]
    /// New INVITEs refused `503` by overload shedding, by reason.
    public internal(set) var shed: [OverloadReason: Int] = [:]

    public init() {}

    mutating func record(received message: SIPMessage) { record(message, direction: "in") }
    mutating func record(sent message: SIPMessage) { record(message, direction: "out") }

    private mutating func record(_ message: SIPMessage, direction: String) {
        if let method = message.method {
            requests[Key(direction: direction, method: Self.known(method), status: 0), default: 0] += 1
        } else if let status = message.status {
            let method = (try? message.cseq().method).map(Self.known) ?? "unknown"
            responses[Key(direction: direction, method: method, status: status), default: 0] += 1
        }
    }

    /// Method names as labels: the ones we know, the rest folded so a peer cannot grow the label set.
    static func known(_ method: SIPMethod) -> String {
        [SIPMethod.invite, .ack, .bye, .cancel, .options, .register, .prack, .update, .info, .message, .refer, .notify, .subscribe]
            .contains(method) ? method.rawValue : "other"
    }
}

/// Why a new INVITE was shed (`UserAgentConfig.maxCalls`, `maxPendingInvites`).
public enum OverloadReason: String, Hashable, Sendable, CaseIterable {
    /// As many calls up as allowed.
    case calls
    /// Too many INVITEs still unanswered.
    case pending
}
