/// A call's id (the Voice API's conversation-level call id).
public struct CallID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// A voice call: its legs and the conversation they meet in.
///
/// A slot for telephony (a later issue) to fill: nothing creates calls yet, and the type carries
/// no behaviour.
public struct Call: Sendable, Hashable {
    public var id: CallID
    public var conversationID: String?
    public var legs: [LegID]
    public var state: CallState

    public init(id: CallID, conversationID: String? = nil, legs: [LegID] = [], state: CallState) {
        self.id = id
        self.conversationID = conversationID
        self.legs = legs
        self.state = state
    }
}
