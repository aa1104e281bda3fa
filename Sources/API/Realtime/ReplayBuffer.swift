/// The last events a realtime session was sent, for `session:resume`: a fixed-size ring, so appending
/// costs the same however full it is, plus the newest evicted event id per conversation so a resume that
/// reaches further back than the ring can say its replay is incomplete instead of leaving a silent gap.
struct ReplayBuffer {
    struct Entry {
        var conversationID: String
        var id: Int64
        /// The message exactly as it was pushed (shared with every other session that got it).
        var text: String
    }

    let capacity: Int
    private var storage: [Entry] = []
    private var head = 0
    private(set) var evicted: [String: Int64] = [:]

    init(capacity: Int) { self.capacity = max(1, capacity) }

    var count: Int { storage.count }

    mutating func append(_ e: Entry) {
        if storage.count < capacity {
            storage.append(e)
            return
        }
        let old = storage[head]
        if old.id > evicted[old.conversationID, default: 0] { evicted[old.conversationID] = old.id }
        storage[head] = e
        head = (head + 1) % capacity
    }

    /// Entries oldest first.
    var entries: [Entry] {
        storage.count < capacity ? storage : Array(storage[head...] + storage[..<head])
    }

    /// What a client that saw up to `lastIDs` missed, and the conversations whose missed events were already
    /// evicted (the client must read those from the REST API).
    func missed(after lastIDs: [String: Int64]) -> (entries: [Entry], incomplete: [String]) {
        let entries = self.entries.filter { $0.id > lastIDs[$0.conversationID, default: 0] }
        let incomplete = evicted.filter { lastIDs[$0.key, default: 0] < $0.value }.map(\.key).sorted()
        return (entries, incomplete)
    }
}
