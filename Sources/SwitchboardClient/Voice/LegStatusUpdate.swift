/// One `leg:status:update` conversation event: a leg of a call the user is in changed status.
public struct LegStatusUpdate: Sendable, Hashable {
    public var legID: CallID
    public var conversationID: String
    public var status: LegStatus
    /// The channel (`app`, `phone`, `sip`…).
    public var channelType: String
    public var direction: String
    public var memberID: String

    init?(_ event: ConversationEvent) {
        guard event.type == "leg:status:update", let id = event.body["leg_id"]?.stringValue,
              let status = event.body["status"]?.stringValue.flatMap(LegStatus.init(rawValue:)) else { return nil }
        legID = CallID(id)
        conversationID = event.body["conversation_id"]?.stringValue ?? event.conversationID
        self.status = status
        channelType = event.body["type"]?.stringValue ?? ""
        direction = event.body["direction"]?.stringValue ?? ""
        memberID = event.body["member_id"]?.stringValue ?? event.from ?? ""
    }
}
