/// A leg's id (`LEG-…` style; the Voice API calls it a call's uuid).
public struct LegID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public var description: String { rawValue }
}

/// One party of a call: a phone over SIP, or an app user; a participant of the call's room.
///
/// A slot for telephony (a later issue) to fill: nothing creates legs yet, and the type carries
/// no behaviour.
public struct Leg: Sendable, Hashable {
    public var id: LegID
    public var callID: CallID
    /// The conversation whose room the leg's audio joins, once it has one.
    public var conversationID: String?
    public var state: CallState

    public init(id: LegID, callID: CallID, conversationID: String? = nil, state: CallState) {
        self.id = id
        self.callID = callID
        self.conversationID = conversationID
        self.state = state
    }
}
