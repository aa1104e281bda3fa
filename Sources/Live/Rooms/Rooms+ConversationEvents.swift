import Platform
import Wire

extension Rooms: ConversationEventSink {
    /// A member that left, or whose audio was disabled elsewhere (REST, an app server), loses its
    /// media here; one muted or earmuffed by anyone (its own client, the Conversation API, the Voice API)
    /// is muted or earmuffed here. Runs under the store's writer lock: only hands the event on.
    public nonisolated func deliver(_ event: ConversationEvent, recipients: [String]) {
        guard event.type == "member:left" || event.type == "member:media",
              let member = event.from ?? event.body["member_id"]?.stringValue else { return }
        let conversation = event.conversationID
        if event.type == "member:media", event.body["audio"]?.boolValue != false {
            // The Task reads the member's media as stored when it runs: events handed on out of order still
            // leave the latest state.
            Task { await self.memberMedia(conversationID: conversation, memberID: member) }
            return
        }
        let left = event.type == "member:left"
        Task { await self.memberGone(conversationID: conversation, memberID: member, left: left) }
    }
}
