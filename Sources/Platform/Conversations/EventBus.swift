import Foundation
import Synchronization

/// Receives every conversation event once it is stored, in event-id order per conversation.
public protocol ConversationEventSink: AnyObject, Sendable {
    /// `recipients` are the user ids that should see it live (members at that moment plus the event's subject).
    /// Called after the event's transaction committed, while the store's writer lock is still held (which keeps
    /// commit order): enqueue and return, never block or touch the store.
    func deliver(_ event: ConversationEvent, recipients: [String])
}

/// Fans stored events out to the realtime gateway and webhook delivery.
public final class EventBus: Sendable {
    private let sinks = Mutex<[any ConversationEventSink]>([])

    public init() {}

    public func add(_ sink: any ConversationEventSink) { sinks.withLock { $0.append(sink) } }

    func publish(_ event: ConversationEvent, recipients: [String]) {
        for sink in sinks.withLock({ $0 }) { sink.deliver(event, recipients: recipients) }
    }
}
