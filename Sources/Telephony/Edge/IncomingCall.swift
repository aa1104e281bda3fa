import Wire

/// An inbound SIP call offered to the application layer: who called which number, their SDP and
/// headers, and the controls to ring, send early media, answer or reject it. Thread-safe: every
/// control hops to the edge's loop. Later events of the call arrive on `events`.
public final class IncomingCall: Sendable {
    public let id: CallID
    public let from: SIPAddress
    public let to: SIPAddress
    /// The dialled number (digits) or user part.
    public let number: String
    /// The number's routing (application, trunk), nil for calls from devices to non-numbers.
    public let route: NumberRoute?
    /// The trunk the call came from, nil for registered devices.
    public let trunk: String?
    public let offer: SessionDescription?
    public let headers: SIPHeaders
    /// Connected, updated (re-INVITE) and ended, as they happen.
    public let events: AsyncStream<CallEvent>
    let continuation: AsyncStream<CallEvent>.Continuation
    unowned let edge: SIPEdge

    init(id: CallID, request: SIPMessage, from: SIPAddress, to: SIPAddress, number: String, route: NumberRoute?, trunk: String?,
         offer: SessionDescription?, edge: SIPEdge) {
        self.id = id
        self.from = from
        self.to = to
        self.number = number
        self.route = route
        self.trunk = trunk
        self.offer = offer
        self.headers = request.headers
        self.edge = edge
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(16))
    }

    /// 180 Ringing.
    public func ring() { edge.onLoop { $0.progress(self.id, status: 180, sdp: nil) } }
    /// 183 Session Progress with early-media SDP (reliable when the caller supports 100rel).
    public func earlyMedia(sdp: SessionDescription) { edge.onLoop { $0.progress(self.id, status: 183, sdp: sdp) } }
    /// 200 OK with our SDP.
    public func answer(sdp: SessionDescription) { edge.onLoop { $0.answer(self.id, sdp: sdp) } }
    /// A final failure response (404, 480, 486, 603, ...).
    public func reject(status: Int) { edge.onLoop { $0.reject(self.id, status: status) } }
    /// BYE once answered.
    public func hangup() { edge.onLoop { $0.hangup(self.id) } }
    /// A key pressed, sent in a SIP INFO once the call is up (`UserAgentCore.sendKey`).
    public func sendKey(_ key: Character) { edge.onLoop { $0.sendKey(self.id, key) } }
}
