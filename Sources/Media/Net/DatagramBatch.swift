import CShims
import Glibc

/// Preallocated memory for a batch of datagrams: `count` slots of `stride` bytes, each with
/// a length and a socket address. Filled by `recvmmsg` or queued for `sendmmsg`.
///
/// The load generator's peers and the UDP send floor (MediaLoad) receive and send with the
/// same batches as a worker: the type and `slot` are public so `slot` inlines there, the rest
/// is package-wide.
public final class DatagramBatch {
    @usableFromInline package let capacity: Int
    @usableFromInline let stride: Int
    @usableFromInline let storage: UnsafeMutableRawPointer
    @usableFromInline package let lengths: UnsafeMutablePointer<UInt32>
    @usableFromInline let addresses: UnsafeMutablePointer<sockaddr_storage>
    @usableFromInline var count = 0

    package init(capacity: Int, stride: Int) {
        self.capacity = capacity
        self.stride = stride
        storage = .allocate(byteCount: capacity * stride, alignment: 16)
        lengths = .allocate(capacity: capacity)
        lengths.initialize(repeating: 0, count: capacity)
        addresses = .allocate(capacity: capacity)
        addresses.initialize(repeating: sockaddr_storage(), count: capacity)
    }

    deinit {
        storage.deallocate()
        lengths.deallocate()
        addresses.deallocate()
    }

    @inlinable @inline(__always)
    public func slot(_ i: Int) -> UnsafeMutableRawPointer { storage + i * stride }

    /// Where the `i`th datagram of the last `receive` came from.
    package func source(_ i: Int) -> PeerAddress? { PeerAddress(storage: addresses + i) }

    /// Reads up to `capacity` datagrams without blocking; returns how many arrived.
    package func receive(from socket: UDPSocket) -> Int {
        let n = sb_udp_recv_batch(
            socket.fd, storage.assumingMemoryBound(to: UInt8.self), stride, lengths, addresses, UInt32(capacity))
        count = max(0, Int(n))
        return count
    }
}

/// Outgoing datagrams collected while a receive batch is processed and sent with `sendmmsg`.
///
/// The packet path reserves a slot, writes (and SRTP-protects) the packet straight into
/// it, and commits it with the destination; nothing is copied again before the kernel.
/// The queue holds at most `capacity` datagrams: a large fan-out leaves in chunks as it is
/// produced, so the first subscribers do not wait for the last one's encryption.
///
/// Runs for one destination (`commitSegment`: a subscriber's share of a publisher's packets from one
/// receive batch, `FanoutBatch`) leave as one message with UDP generic segmentation offload: the
/// kernel walks its UDP/IP output path once per run instead of once per datagram and cuts the run
/// into datagrams late (in the NIC, or in software just before the device), so what the subscriber
/// receives is unchanged. A run holds datagrams of one length, the last one no longer. Where the path
/// refuses segmentation (no checksum offload, an IPsec route) the first refused send turns it off for
/// the queue and everything goes out one datagram per message, as before.
///
/// The UDP send floor (MediaLoad) measures the kernel's share of this output pattern through
/// the same queue: `reserve`, `commit` and `commitSegment` are inlinable so they inline there as
/// here; `init`, `flush`, `slotCapacity` and `sent` are package-wide.
public final class SendQueue {
    @usableFromInline let batch: DatagramBatch
    let socket: UDPSocket
    /// Per slot: 1 when the datagram rides in the message of the slot before it.
    @usableFromInline let joins: UnsafeMutablePointer<UInt8>
    /// The run the next `commitSegment` may join: its destination (nil: none open), segment size,
    /// datagrams and bytes so far.
    @usableFromInline var runDestination: UnsafePointer<sockaddr_storage>?
    @usableFromInline var runSize = 0
    @usableFromInline var runCount = 0
    @usableFromInline var runBytes = 0
    /// Whether any slot of the current batch joined a run.
    @usableFromInline var joined = false
    /// Whether runs are sent segmented (false once the kernel refused one).
    @usableFromInline package private(set) var segmentation = true
    /// Datagrams that left inside a segmented message after its first (each one a pass through the
    /// kernel's output path saved), and segmented sends the kernel refused.
    package private(set) var segmentsCoalesced: UInt64 = 0
    package private(set) var segmentationRefusals: UInt64 = 0
    /// Datagrams the kernel refused (full socket buffer) or that did not fit.
    private(set) var dropped: UInt64 = 0
    package private(set) var sent: UInt64 = 0
    private(set) var sentBytes: UInt64 = 0
    /// Benchmark mode: `flush` counts the datagrams and drops them instead of calling the kernel.
    var discard = false
    /// When the datagrams being queued were received (monotonic ns), or 0 for timer output.
    var receivedAt: UInt64 = 0
    /// Time from `recvmmsg` returning to each datagram's `sendmmsg` returning: the latency the
    /// SFU itself adds (1 µs buckets up to 20 ms).
    private(set) var forwardingLatency = LatencyHistogram(bucketNanoseconds: 1_000, buckets: 20_000)

    /// A run's limits: the kernel takes at most 64 segments (UDP_MAX_SEGMENTS before Linux 6.9) and
    /// one IP datagram's worth of payload.
    @usableFromInline static let maxRunSegments = 64
    @usableFromInline static let maxRunBytes = 60_000

    package init(socket: UDPSocket, capacity: Int = 32, stride: Int = 2048) {
        self.socket = socket
        batch = DatagramBatch(capacity: capacity, stride: stride)
        joins = .allocate(capacity: capacity)
        joins.initialize(repeating: 0, count: capacity)
    }

    deinit { joins.deallocate() }

    package var slotCapacity: Int { batch.stride }

    /// The next free slot; flushes first when the batch is full.
    @inlinable @inline(__always)
    public func reserve() -> UnsafeMutableRawPointer {
        if batch.count == batch.capacity { flush() }
        return batch.slot(batch.count)
    }

    /// Queues the reserved slot for `destination` (a prepared socket address).
    @inlinable @inline(__always)
    public func commit(length: Int, to destination: UnsafePointer<sockaddr_storage>) {
        let i = batch.count
        batch.lengths[i] = UInt32(length)
        joins[i] = 0
        runDestination = nil
        // Only the address itself: a sockaddr_in6 is 28 bytes, the storage 128, and the send names
        // no more (its length follows the family), so a slot's other three quarters are never read.
        UnsafeMutableRawPointer(batch.addresses + i).copyMemory(from: destination, byteCount: SendQueue.addressBytes)
        batch.count = i + 1
    }

    /// Queues the reserved slot for `destination`, in one segmented message with the datagrams just
    /// before it when they went to the same `destination` (the same pointer: a transport's address)
    /// and were as long or longer. A shorter datagram closes its run.
    @inlinable @inline(__always)
    package func commitSegment(length: Int, to destination: UnsafePointer<sockaddr_storage>) {
        let i = batch.count
        if let open = runDestination, open == destination, length <= runSize, runCount < SendQueue.maxRunSegments,
           runBytes + length <= SendQueue.maxRunBytes {
            batch.lengths[i] = UInt32(length)
            joins[i] = 1
            joined = true
            UnsafeMutableRawPointer(batch.addresses + i).copyMemory(from: destination, byteCount: SendQueue.addressBytes)
            batch.count = i + 1
            runCount += 1
            runBytes += length
            if length < runSize { runDestination = nil }
            return
        }
        commit(length: length, to: destination)
        guard segmentation else { return }
        runDestination = destination
        runSize = length
        runCount = 1
        runBytes = length
    }

    @usableFromInline static let addressBytes = 32

    /// Queues a copy of `bytes` (control packets: STUN, DTLS, RTCP).
    func enqueue(_ bytes: UnsafeRawBufferPointer, to destination: UnsafePointer<sockaddr_storage>) {
        guard let base = bytes.baseAddress, bytes.count <= batch.stride else {
            dropped += 1
            return
        }
        let slot = reserve()
        slot.copyMemory(from: base, byteCount: bytes.count)
        commit(length: bytes.count, to: destination)
    }

    /// Sends everything queued; what the kernel will not take now is dropped and counted.
    @usableFromInline package func flush() {
        runDestination = nil
        // Whether this batch goes out with its runs as segmented messages (off from the first refusal on).
        var segmented = joined && segmentation
        joined = false
        if discard {
            for i in 0..<batch.count { sentBytes += UInt64(batch.lengths[i]) }
            sent += UInt64(batch.count)
            batch.count = 0
            return
        }
        var offset = 0
        let total = batch.count
        let base = batch.storage.assumingMemoryBound(to: UInt8.self)
        while offset < total {
            let n = segmented
                ? sb_udp_send_segments(socket.fd, base + offset * batch.stride, batch.stride, batch.lengths + offset,
                                       batch.addresses + offset, joins + offset, UInt32(total - offset))
                : sb_udp_send_batch(socket.fd, base + offset * batch.stride, batch.stride, batch.lengths + offset,
                                    batch.addresses + offset, UInt32(total - offset))
            if n <= 0 {
                let error = sb_errno()
                // EAGAIN: the socket buffer is full; other errors (ICMP unreachable) skip one message.
                if n < 0 && sb_is_eagain(error) != 0 {
                    dropped += UInt64(total - offset)
                    break
                }
                let size = segmented ? runLength(at: offset, total: total) : 1
                if size > 1, n < 0, sb_is_segmentation_refused(error) != 0 {
                    // The path cannot segment: from now on one datagram per message (every slot has its address).
                    segmentation = false
                    segmented = false
                    segmentationRefusals += 1
                    continue
                }
                dropped += UInt64(size)
                offset += size
                continue
            }
            for i in offset..<(offset + Int(n)) {
                sentBytes += UInt64(batch.lengths[i])
                if segmented { segmentsCoalesced += UInt64(joins[i]) }
            }
            sent += UInt64(n)
            if receivedAt != 0 { forwardingLatency.record(sb_monotonic_ns() &- receivedAt, weight: UInt64(n)) }
            offset += Int(n)
        }
        batch.count = 0
    }

    /// Datagrams in the message that starts at slot `offset`.
    private func runLength(at offset: Int, total: Int) -> Int {
        var end = offset + 1
        while end < total, joins[end] != 0 { end += 1 }
        return end - offset
    }
}
