/// Puts the RTP packets of one stream back in sequence order (RFC 3550 §5.1, §A.1).
///
/// ```
///   insert ─▶ held, sorted by extended sequence number (at most `capacity`)
///                 │
///   pop(now) ◀────┘ the next expected number at once; past a gap only when
///                   the oldest held packet has waited longer than `maxWait`,
///                   the buffer is full, or the newest held packet is more than
///                   `capacity` ahead of the next expected one
/// ```
///
/// Sequence numbers are extended to 64 bits against the newest number seen, so the
/// 65535 → 0 wrap orders like any other step. The first packet inserted is the
/// reference; until something has been released, a packet from before it is still
/// accepted, and with a `startWait` nothing is released before the oldest held packet has
/// waited that long (or the buffer is full): the packets just before the first one may
/// still be on their way (a key frame asked for as a recording starts, retransmitted).
/// After that, a packet at or behind the last released number is late.
///
/// Time comes in as arguments (nanoseconds on any monotonic clock): the buffer keeps
/// no clock of its own. Storage is a fixed ring of `capacity` slots allocated once.
public struct RTPReorderBuffer<Element> {
    fileprivate struct Entry {
        var extended: Int64
        var arrival: UInt64
        var element: Element
    }

    public let capacity: Int
    /// Nanoseconds the oldest held packet may wait for a missing one before it is skipped.
    public let maxWait: UInt64
    /// Nanoseconds the first packet is held before anything is released (0: released at once).
    public let startWait: UInt64

    /// Packets refused: duplicates, late arrivals, and arrivals while the buffer was full.
    public private(set) var dropped: Int = 0
    /// Sequence numbers skipped over as lost.
    public private(set) var lost: Int = 0

    /// Held packets, sorted by extended number, in `slots[(head + i) % capacity]`.
    private var slots: [Entry?]
    private var head = 0
    public private(set) var count = 0
    /// Extended number of the newest packet seen: the reference for extending the next.
    private var newest: Int64?
    /// Extended number of the last packet handed out.
    private var released: Int64?

    /// A buffer that holds at most `capacity` packets (1...32768, so every held packet
    /// is less than half the sequence space from the others).
    public init(capacity: Int = 512, maxWait: UInt64, startWait: UInt64 = 0) {
        precondition(capacity >= 1 && capacity <= 32768, "capacity must be in 1...32768")
        self.capacity = capacity
        self.maxWait = maxWait
        self.startWait = startWait
        slots = Array(repeating: nil, count: capacity)
    }

    public var isEmpty: Bool { count == 0 }

    /// Holds a packet; false (and counted in `dropped`) for a duplicate, a packet at or
    /// behind one already released, or when the buffer is full because nothing was popped.
    public mutating func insert(sequence: UInt16, arrival: UInt64, _ element: Element) -> Bool {
        let extended: Int64
        if let newest {
            let reference = SequenceNumber(UInt16(truncatingIfNeeded: newest))
            extended = newest + Int64(reference.distance(to: SequenceNumber(sequence)))
        } else {
            extended = Int64(sequence)
        }
        if let released, extended <= released {
            dropped += 1
            return false
        }
        let position = lowerBound(extended)
        if position < count, entry(at: position).extended == extended {
            dropped += 1
            return false
        }
        guard count < capacity else {
            dropped += 1
            return false
        }
        // Shift the tail one slot right; reordering is usually a step or two from the end.
        var i = count
        while i > position {
            slots[slot(i)] = slots[slot(i - 1)]
            i -= 1
        }
        slots[slot(position)] = Entry(extended: extended, arrival: arrival, element: element)
        count += 1
        if newest.map({ extended > $0 }) ?? true { newest = extended }
        return true
    }

    /// The next packet in sequence order, or nil while the next one is still awaited.
    ///
    /// `gapBefore` is true when sequence numbers were skipped to reach it (also counted in
    /// `lost`); the first packet released is never after a gap.
    public mutating func pop(now: UInt64) -> (sequence: UInt16, element: Element, gapBefore: Bool)? {
        guard count > 0 else { return nil }
        let first = entry(at: 0)
        if released == nil, startWait > 0 {
            guard count >= capacity || oldestWait(now: now) > startWait else { return nil }
        } else if let released, first.extended != released + 1 {
            guard count >= capacity || entry(at: count - 1).extended - (released + 1) >= Int64(capacity)
                    || oldestWait(now: now) > maxWait else { return nil }
        }
        return removeFirst()
    }

    /// Everything held, in order, gaps counted as `pop` counts them: the end of a recording.
    public mutating func flush() -> [(sequence: UInt16, element: Element, gapBefore: Bool)] {
        var result: [(sequence: UInt16, element: Element, gapBefore: Bool)] = []
        result.reserveCapacity(count)
        while count > 0 { result.append(removeFirst()) }
        return result
    }

    private mutating func removeFirst() -> (sequence: UInt16, element: Element, gapBefore: Bool) {
        let first = entry(at: 0)
        slots[head] = nil
        head = head + 1 == capacity ? 0 : head + 1
        count -= 1
        var gap = false
        if let released, first.extended != released + 1 {
            gap = true
            lost += Int(first.extended - released - 1)
        }
        released = first.extended
        return (UInt16(truncatingIfNeeded: first.extended), first.element, gap)
    }

    /// How long the packet that arrived first has been held (0 if it arrived after `now`).
    private func oldestWait(now: UInt64) -> UInt64 {
        var oldest = UInt64.max
        for i in 0..<count { oldest = min(oldest, entry(at: i).arrival) }
        return now >= oldest ? now - oldest : 0
    }

    @inline(__always)
    private func slot(_ index: Int) -> Int {
        let s = head + index
        return s >= capacity ? s - capacity : s
    }

    @inline(__always)
    private func entry(at index: Int) -> Entry {
        // Every index below `count` holds an entry.
        slots[slot(index)]!
    }

    /// The first held position whose extended number is not below `extended`.
    private func lowerBound(_ extended: Int64) -> Int {
        // The common case first: in order, after everything held.
        if count == 0 || entry(at: count - 1).extended < extended { return count }
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            if entry(at: mid).extended < extended { low = mid + 1 } else { high = mid }
        }
        return low
    }
}

extension RTPReorderBuffer: Sendable where Element: Sendable {}
extension RTPReorderBuffer.Entry: Sendable where Element: Sendable {}
