import Runtime

/// A binary min-heap of (deadline, owner): the transaction timers of a user agent core in one
/// ordered place, so the next deadline and the due transactions cost O(log n), not a scan of every
/// transaction (answered ones linger up to 32 s for retransmissions, thousands at a few hundred calls/s).
/// Entries go stale when an owner's deadline moves; the core checks each against the owner when it
/// surfaces and drops it if it no longer matches.
struct DeadlineQueue<Owner: Hashable> {
    private var items: [(deadline: Instant, owner: Owner)] = []

    var isEmpty: Bool { items.isEmpty }
    var count: Int { items.count }
    var first: (deadline: Instant, owner: Owner)? { items.first }

    mutating func push(_ deadline: Instant, _ owner: Owner) {
        items.append((deadline, owner))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            guard items[i].deadline < items[parent].deadline else { break }
            items.swapAt(i, parent)
            i = parent
        }
    }

    @discardableResult
    mutating func popFirst() -> (deadline: Instant, owner: Owner)? {
        guard !items.isEmpty else { return nil }
        items.swapAt(0, items.count - 1)
        let top = items.removeLast()
        var i = 0
        while true {
            let l = 2 * i + 1, r = l + 1
            var smallest = i
            if l < items.count, items[l].deadline < items[smallest].deadline { smallest = l }
            if r < items.count, items[r].deadline < items[smallest].deadline { smallest = r }
            if smallest == i { break }
            items.swapAt(i, smallest)
            i = smallest
        }
        return top
    }
}
