/// The packets a receive batch brought for subscribers, fanned out together when the batch is done
/// (`WorkerCore.handle`): each producer's packets of the batch go to each of its consumers back to
/// back, so a subscriber's share leaves as one run (`SendQueue.commitSegment`) and the consumer's
/// state (rewriter, transport, SRTP context) is fetched once for the run instead of once per packet.
///
/// A publisher's packets keep their order for every consumer; packets of different producers may
/// leave in another order than they came, as they could have arrived. The packets stay where
/// `recvmmsg` put them (in place, already rewritten by `Producer.receive`) until `run` returns.
/// Fixed capacity, no allocation on the packet path.
final class FanoutBatch {
    struct Entry {
        unowned(unsafe) let producer: Producer
        let packet: UnsafeMutableRawPointer
        let length: Int
        let sequence: UInt16
        let timestamp: UInt32
        let keyframe: Bool
        let temporal: TemporalMark
    }

    let capacity: Int
    private var entries: [Entry] = []
    /// `entries` indices grouped by producer (first appearance order), and where each group ends.
    private var order: [Int]
    private var groupEnds: [Int]
    private var taken: [Bool]

    init(capacity: Int) {
        self.capacity = capacity
        entries.reserveCapacity(capacity)
        order = [Int](repeating: 0, count: capacity)
        groupEnds = [Int](repeating: 0, count: capacity)
        taken = [Bool](repeating: false, count: capacity)
    }

    /// Holds one packet of `producer` for the fan-out (running the ones held first if full).
    @inline(__always)
    func add(_ producer: Producer, _ packet: UnsafeMutableRawPointer, length: Int, sequence: UInt16, timestamp: UInt32,
             keyframe: Bool, temporal: TemporalMark, now: UInt64, queue: SendQueue) {
        if entries.count == capacity { run(now: now, queue: queue) }
        entries.append(Entry(producer: producer, packet: packet, length: length, sequence: sequence,
                             timestamp: timestamp, keyframe: keyframe, temporal: temporal))
    }

    /// Sends every held packet to its producer's consumers: per producer, consumer by consumer, that
    /// consumer's packets in arrival order.
    func run(now: UInt64, queue: SendQueue) {
        let n = entries.count
        guard n > 0 else { return }
        defer { entries.removeAll(keepingCapacity: true) }
        entries.withUnsafeBufferPointer { entries in
            if n == 1 { return fanOut(entries, order: nil, from: 0, to: 1, now: now, queue: queue) }
            // Group by producer, keeping arrival order within each group (n is at most a receive batch).
            var filled = 0
            var groupCount = 0
            for i in 0..<n where !taken[i] {
                let producer = entries[i].producer
                order[filled] = i
                filled += 1
                for j in (i + 1)..<n where !taken[j] && entries[j].producer === producer {
                    taken[j] = true
                    order[filled] = j
                    filled += 1
                }
                groupEnds[groupCount] = filled
                groupCount += 1
            }
            for i in 0..<n { taken[i] = false }
            order.withUnsafeBufferPointer { order in
                var start = 0
                for g in 0..<groupCount {
                    let end = groupEnds[g]
                    fanOut(entries, order: order, from: start, to: end, now: now, queue: queue)
                    start = end
                }
            }
        }
    }

    /// Each consumer of the group's producer gets the group's packets, in order.
    @inline(__always)
    private func fanOut(_ entries: UnsafeBufferPointer<Entry>, order: UnsafeBufferPointer<Int>?, from start: Int, to end: Int,
                        now: UInt64, queue: SendQueue) {
        let first = entries[order?[start] ?? start]
        let source = first.producer
        // `consumers` holds every consumer for the whole loop (forwarding never adds or removes one), so
        // each is borrowed rather than retained and released per packet, and the next few
        // subscribers' state is prefetched while this one's packets are protected.
        first.producer.consumers.withUnsafeBufferPointer { list in
            Prefetch.forEach(list) { consumer in
                for k in start..<end {
                    let e = entries[order?[k] ?? k]
                    consumer.forward(e.packet, length: e.length, sequence: e.sequence, timestamp: e.timestamp,
                                     keyframe: e.keyframe, temporal: e.temporal, now: now, queue: queue, from: source)
                }
            }
        }
    }
}
