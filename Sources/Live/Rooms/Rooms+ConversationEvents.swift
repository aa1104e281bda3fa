import Platform
import Wire

extension Rooms: ConversationEventSink {
    /// A member that left, or whose audio was disabled elsewhere (REST, an app server), loses its
    /// media here. Runs under the store's writer lock: only hands the event on.
    public nonisolated func deliver(_ event: ConversationEvent, recipients: [String]) {
        let gone: Bool
        switch event.type {
        case "member:left": gone = true
        case "member:media": gone = event.body["audio"]?.boolValue == false
        default: gone = false
        }
        guard gone, let member = event.from ?? event.body["member_id"]?.stringValue else { return }
        let conversation = event.conversationID
        let left = event.type == "member:left"
        Task { await self.memberGone(conversationID: conversation, memberID: member, left: left) }
    }
}
