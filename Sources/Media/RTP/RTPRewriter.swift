import Wire

/// Maps a producer's sequence numbers and timestamps onto a consumer's own stream.
///
/// A consumer's receiver must see one continuous stream whatever happens upstream: the
/// consumer starts mid-stream, pauses and resumes, or switches to another producer. Each
/// such event starts a new epoch: the first packet forwarded afterwards continues right
/// after the last one sent (sequence + 1, timestamp + elapsed time in clock ticks), and
/// every later packet keeps the same offsets. Packets older than the epoch's first one
/// are dropped, since their numbers would collide with what was already sent.
///
/// A packet the consumer leaves out (a temporal layer its subscriber does not take) is `drop`ped: the
/// packets after it move down a number, so the subscriber sees no gap. A packet arriving late, after
/// later ones were numbered, gets the number it would have had, the drops after it counted back from
/// the last `dropMemory` drops (older than those it cannot be numbered, and is left out); a late packet
/// that is itself dropped leaves its number unused.
struct RTPRewriter {
    let clockRate: UInt32
    private(set) var sequenceOffset: UInt16 = 0
    private(set) var timestampOffset: UInt32 = 0
    private(set) var lastSequence: UInt16
    private(set) var lastTimestamp: UInt32
    private(set) var lastSentAt: UInt64 = 0
    /// First input sequence number of the current epoch.
    private(set) var epochStart: UInt16 = 0
    /// First output sequence number of the current epoch (NACKs below it cannot be mapped).
    private(set) var epochOutputStart: UInt16 = 0
    private(set) var needsSync = true
    private(set) var hasSent = false
    /// The newest input sequence number of the epoch, and the latest drops (a ring, inline).
    private var newestInput: UInt16 = 0
    private var drops = SIMD32<UInt16>()
    private var dropCount = 0
    private var nextDrop = 0
    private var dropsForgotten = false
    static let dropMemory = 32

    /// `initialSequence`/`initialTimestamp` are where the output stream starts (random per RFC 3550 §5.1).
    init(clockRate: UInt32, initialSequence: UInt16, initialTimestamp: UInt32) {
        self.clockRate = clockRate
        lastSequence = initialSequence &- 1
        lastTimestamp = initialTimestamp
    }

    /// Starts a new epoch at the next packet (resume, producer switch, key frame wait).
    mutating func resync() { needsSync = true }

    /// The output numbers for an input packet, or nil to drop it.
    @inline(__always)
    mutating func rewrite(sequence: UInt16, timestamp: UInt32, now: UInt64) -> (sequence: UInt16, timestamp: UInt32)? {
        if needsSync {
            needsSync = false
            let outSequence = lastSequence &+ 1
            var ticks: UInt64 = 1
            if hasSent {
                let elapsed = now &- lastSentAt
                ticks = max(1, elapsed / 1000 * UInt64(clockRate) / 1_000_000)
            }
            let outTimestamp = hasSent ? lastTimestamp &+ UInt32(truncatingIfNeeded: ticks) : lastTimestamp
            sequenceOffset = outSequence &- sequence
            timestampOffset = outTimestamp &- timestamp
            epochStart = sequence
            epochOutputStart = outSequence
            newestInput = sequence
            dropCount = 0
            nextDrop = 0
            dropsForgotten = false
            lastSequence = outSequence
            lastTimestamp = outTimestamp
            lastSentAt = now
            hasSent = true
            return (outSequence, outTimestamp)
        }
        if SequenceNumber(epochStart).distance(to: SequenceNumber(sequence)) < 0 { return nil }
        var outSequence = sequence &+ sequenceOffset
        if SequenceNumber(newestInput).distance(to: SequenceNumber(sequence)) > 0 {
            newestInput = sequence
        } else if dropCount > 0 {
            guard let later = dropsAfter(sequence) else { return nil }
            outSequence &+= UInt16(later)
        }
        let outTimestamp = timestamp &+ timestampOffset
        if SequenceNumber(lastSequence).distance(to: SequenceNumber(outSequence)) > 0 {
            lastSequence = outSequence
            lastTimestamp = outTimestamp
            lastSentAt = now
        }
        return (outSequence, outTimestamp)
    }

    /// Leaves an input packet out: the ones after it are numbered one lower.
    mutating func drop(sequence: UInt16) {
        // Before the epoch's first packet nothing is numbered yet; a late one's number stays unused.
        guard hasSent, !needsSync, SequenceNumber(newestInput).distance(to: SequenceNumber(sequence)) > 0 else { return }
        newestInput = sequence
        sequenceOffset &-= 1
        drops[nextDrop] = sequence
        nextDrop = (nextDrop + 1) % Self.dropMemory
        if dropCount == Self.dropMemory { dropsForgotten = true } else { dropCount += 1 }
    }

    /// How many remembered drops came after `sequence` (nil when older drops may have been forgotten).
    private func dropsAfter(_ sequence: UInt16) -> Int? {
        if dropsForgotten, SequenceNumber(drops[nextDrop]).distance(to: SequenceNumber(sequence)) <= 0 { return nil }
        var count = 0
        for i in 0..<dropCount where SequenceNumber(sequence).distance(to: SequenceNumber(drops[i])) > 0 { count += 1 }
        return count
    }

    private func isDropped(_ sequence: UInt16) -> Bool {
        (0..<dropCount).contains { drops[$0] == sequence }
    }

    /// The input sequence number behind an output one (to answer a NACK), if it belongs to
    /// the current epoch and was already sent.
    func inputSequence(for output: UInt16) -> UInt16? {
        guard hasSent, !needsSync else { return nil }
        let fromStart = SequenceNumber(epochOutputStart).distance(to: SequenceNumber(output))
        let fromLast = SequenceNumber(output).distance(to: SequenceNumber(lastSequence))
        guard fromStart >= 0, fromLast >= 0 else { return nil }
        if dropCount == 0 { return output &- sequenceOffset }
        // The input k below the offset's mapping, where k drops came after it.
        for k in 0...dropCount {
            let input = output &- sequenceOffset &- UInt16(k)
            if dropsAfter(input) == k, !isDropped(input) { return input }
        }
        return nil
    }

    /// Output timestamp for an input one under the current offsets (retransmissions).
    func outputTimestamp(for input: UInt32) -> UInt32 { input &+ timestampOffset }

    /// The RTP timestamp that corresponds to `now` (for sender reports, RFC 3550 §6.4.1).
    func timestamp(at now: UInt64) -> UInt32 {
        guard hasSent else { return lastTimestamp }
        let elapsed = now &- lastSentAt
        return lastTimestamp &+ UInt32(truncatingIfNeeded: elapsed / 1000 * UInt64(clockRate) / 1_000_000)
    }
}
