import Wire

/// A call the edge placed through a trunk or to a device: its events (progress, connected with
/// the answer SDP, ended) and hangup. Thread-safe.
public final class OutboundCall: Sendable {
    public let id: CallID
    public let events: AsyncStream<CallEvent>
    let continuation: AsyncStream<CallEvent>.Continuation
    unowned let edge: SIPEdge

    init(id: CallID, edge: SIPEdge) {
        self.id = id
        self.edge = edge
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
    }

    /// CANCEL before the answer, BYE after.
    public func hangup() { edge.onLoop { $0.hangup(self.id) } }
    /// A key pressed, sent in a SIP INFO once the call is up (`UserAgentCore.sendKey`).
    public func sendKey(_ key: Character) { edge.onLoop { $0.sendKey(self.id, key) } }
}
