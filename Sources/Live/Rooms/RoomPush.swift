/// What a room pushes to one member's connection (docs/protocol.md, "Media (rtc:*)").
public enum RoomPush: Sendable, Hashable {
    /// `rtc:offer`: the member's subscription changed; the client answers with `rtc:answer`.
    case offer(conversationID: String, offer: String, tracks: [Track])
}
