import Wire

/// A call ringing this user (`call:invite`): answer or reject it by its id.
public struct CallInvite: Sendable, Hashable {
    public var callID: CallID
    public var conversationID: String
    /// Who calls: the channel type (`app`, `phone`, `sip`) and its address (user name, number or URI).
    public var fromType: String
    public var from: String
    public var direction: String

    init?(body: JSONValue) {
        guard let id = body["call_id"]?.stringValue, !id.isEmpty else { return nil }
        callID = CallID(id)
        conversationID = body["conversation_id"]?.stringValue ?? ""
        let f = body["from"]
        fromType = f?["type"]?.stringValue ?? body["channel_type"]?.stringValue ?? ""
        from = f?["user"]?.stringValue ?? f?["number"]?.stringValue ?? f?["uri"]?.stringValue ?? ""
        direction = body["direction"]?.stringValue ?? ""
    }
}
