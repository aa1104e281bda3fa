import CSQLite

/// Prepared statements keyed by SQL text, least recently used evicted first.
/// Owned by one `Connection`, so never shared between threads.
struct StatementCache {
    private struct Entry {
        var statement: OpaquePointer
        var lastUse: UInt64
    }

    let capacity: Int
    private var entries: [String: Entry] = [:]
    private var clock: UInt64 = 0
    private(set) var hits = 0
    private(set) var misses = 0

    init(capacity: Int) { self.capacity = max(0, capacity) }

    var count: Int { entries.count }

    mutating func lookup(_ sql: String) -> OpaquePointer? {
        clock &+= 1
        guard var entry = entries[sql] else {
            misses += 1
            return nil
        }
        hits += 1
        entry.lastUse = clock
        entries[sql] = entry
        return entry.statement
    }

    /// Stores a statement; returns false (and leaves it to the caller) when caching is off.
    mutating func insert(_ sql: String, _ statement: OpaquePointer) -> Bool {
        guard capacity > 0 else { return false }
        if entries.count >= capacity, let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
            sqlite3_finalize(oldest.value.statement)
            entries.removeValue(forKey: oldest.key)
        }
        clock &+= 1
        entries[sql] = Entry(statement: statement, lastUse: clock)
        return true
    }

    mutating func removeAll() {
        for entry in entries.values { sqlite3_finalize(entry.statement) }
        entries.removeAll()
    }
}
