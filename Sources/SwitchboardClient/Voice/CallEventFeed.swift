import Synchronization
import Wire

/// One call event stream's tracker, fed from the session's pushes and its conversation events;
/// events are yielded under the lock so both sources keep one order.
final class CallEventFeed: Sendable {
    private let tracker = Mutex(CallTracker())
    private let continuation: AsyncStream<CallEvent>.Continuation

    init(_ continuation: AsyncStream<CallEvent>.Continuation) { self.continuation = continuation }

    func push(_ message: JSONValue, ledger: VoiceLedger) {
        tracker.withLock { t in
            for e in t.push(type: message["type"]?.stringValue ?? "", body: message["body"] ?? .object([:]), ledger: ledger) {
                continuation.yield(e)
            }
        }
    }

    func event(_ event: ConversationEvent, ledger: VoiceLedger) {
        tracker.withLock { t in
            for e in t.event(event, ledger: ledger) { continuation.yield(e) }
        }
    }
}
