import Wire

/// Finds gaps in a received RTP stream and decides when to ask for them again
/// (RFC 4585 §6.2.1, with retry timing after libwebrtc's NackRequester).
///
/// Sans-I/O: `received` is called per packet with `now`; `due(now:rtt:)` returns the
/// sequence numbers to put in the next Generic NACK. The missing list is bounded; a gap
/// too large to repair is abandoned and reported so the caller can ask for a key frame.
struct NackGenerator {
    struct Entry {
        var sequenceNumber: UInt16
        var firstMissing: UInt64
        var lastSent: UInt64
        var retries: Int
    }

    /// Gaps larger than this are not worth repairing (request a key frame instead).
    static let maxMissing = 512
    static let maxRetries = 10
    /// Give up on a packet this long after it went missing.
    static let maxAge: UInt64 = 1_000_000_000
    /// Wait a little before the first NACK: reordering usually fills small gaps.
    static let reorderGrace: UInt64 = 10_000_000

    private(set) var missing: [Entry] = []
    private var highest: UInt16?

    init() {
        missing.reserveCapacity(NackGenerator.maxMissing)
    }

    enum Update: Equatable {
        case inOrder
        /// Filled a gap (a retransmission or a reordered packet).
        case recovered
        /// Older than anything tracked, or a duplicate.
        case old
        /// A gap too large to repair; the caller should request a key frame.
        case gapTooLarge
    }

    /// Records a received sequence number.
    mutating func received(_ sequenceNumber: UInt16, now: UInt64) -> Update {
        guard let top = highest else {
            highest = sequenceNumber
            return .inOrder
        }
        let distance = SequenceNumber(top).distance(to: SequenceNumber(sequenceNumber))
        if distance <= 0 {
            if let i = missing.firstIndex(where: { $0.sequenceNumber == sequenceNumber }) {
                missing.remove(at: i)
                return .recovered
            }
            return .old
        }
        highest = sequenceNumber
        if distance == 1 { return .inOrder }
        let gap = distance - 1
        if gap > NackGenerator.maxMissing {
            missing.removeAll(keepingCapacity: true)
            return .gapTooLarge
        }
        // Keep the list bounded: drop the oldest entries first.
        let overflow = missing.count + gap - NackGenerator.maxMissing
        if overflow > 0 { missing.removeFirst(min(overflow, missing.count)) }
        var s = top &+ 1
        while s != sequenceNumber {
            missing.append(Entry(sequenceNumber: s, firstMissing: now, lastSent: 0, retries: 0))
            s &+= 1
        }
        return .inOrder
    }

    /// Sequence numbers to NACK now; marks them sent. Entries past their retries or age go.
    mutating func due(now: UInt64, rtt: UInt64) -> [UInt16] {
        guard !missing.isEmpty else { return [] }
        let interval = max(rtt, 20_000_000)
        var out: [UInt16] = []
        var keep = 0
        for i in missing.indices {
            var e = missing[i]
            if e.retries >= NackGenerator.maxRetries || now &- e.firstMissing > NackGenerator.maxAge { continue }
            if now &- e.firstMissing >= NackGenerator.reorderGrace && (e.lastSent == 0 || now &- e.lastSent >= interval) {
                out.append(e.sequenceNumber)
                e.lastSent = now
                e.retries += 1
            }
            missing[keep] = e
            keep += 1
        }
        missing.removeLast(missing.count - keep)
        return out
    }

    /// Forgets everything (stream reset).
    mutating func reset() {
        missing.removeAll(keepingCapacity: true)
        highest = nil
    }
}
