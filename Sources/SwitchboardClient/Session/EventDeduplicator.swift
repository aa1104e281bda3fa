/// The last event id processed per conversation: what `session:resume` sends, and the filter
/// that drops an event seen before (a replay overlapping live delivery, a gap fetched over REST).
///
/// Event ids increase by one per conversation (docs/protocol.md, "Ordering guarantees"), so an
/// id at or below the last one is a duplicate.
public struct EventDeduplicator: Sendable, Hashable {
    public private(set) var lastIDs: [String: Int] = [:]

    public init() {}

    /// Whether event `id` of `conversation` is new; if so it becomes the last one.
    public mutating func accept(conversation: String, id: Int) -> Bool {
        if let last = lastIDs[conversation], id <= last { return false }
        lastIDs[conversation] = id
        return true
    }

    /// Starts tracking a conversation from `id` (events up to it are treated as seen).
    public mutating func mark(conversation: String, upTo id: Int) {
        lastIDs[conversation] = max(lastIDs[conversation] ?? 0, id)
    }
}
