import Foundation
import Synchronization

/// Receives every conversation event once it is stored, in event-id order per conversation.
public protocol ConversationEventSink: AnyObject, Sendable {
    /// `recipients` are the user ids that should see it live (members at that moment plus the event's subject).
    /// Called after the event's transaction committed, while the store's writer lock is still held (which keeps
    /// commit order): enqueue and return, never block or touch the store.
    func deliver(_ event: ConversationEvent, recipients: [String])
}

/// Carries stored events to their consumers (the realtime gateway, webhook delivery, media). The in-process
/// `LocalEventBus` is the embedded default; a bus across nodes (Redis, NATS) implements the same protocol.
public protocol ConversationEventBus: Sendable {
    func add(_ sink: any ConversationEventSink)
    /// Called once the event's transaction committed, in commit order.
    func publish(_ event: ConversationEvent, recipients: [String])
}

/// Fans stored events out to the sinks of this process.
public final class LocalEventBus: ConversationEventBus {
    private let sinks = Mutex<[any ConversationEventSink]>([])

    public init() {}

    public func add(_ sink: any ConversationEventSink) { sinks.withLock { $0.append(sink) } }

    public func publish(_ event: ConversationEvent, recipients: [String]) {
        for sink in sinks.withLock({ $0 }) { sink.deliver(event, recipients: recipients) }
    }
}
