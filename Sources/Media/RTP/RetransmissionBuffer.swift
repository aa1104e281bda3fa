/// The last packets of one RTP stream, kept to answer NACKs (RFC 4585 §6.2.1).
///
/// Slots are preallocated and indexed by sequence number modulo the slot count, so storing
/// and finding a packet never allocates. A packet is served only while it is younger than
/// `maxAge` (1 s for audio, 2 s for video): older media is useless to a receiver whose
/// jitter buffer has moved on.
final class RetransmissionBuffer {
    /// Largest packet kept; longer ones (rare, never from WebRTC senders) are not stored.
    static let slotSize = 1500

    let slotCount: Int
    let maxAge: UInt64
    private let storage: UnsafeMutableRawPointer
    private let sequence: UnsafeMutablePointer<UInt16>
    private let lengths: UnsafeMutablePointer<UInt16>
    private let stored: UnsafeMutablePointer<UInt64>

    /// - Parameters:
    ///   - slots: rounded up to a power of two; must cover `maxAge` at the stream's packet rate.
    ///   - maxAge: nanoseconds a packet stays retransmittable.
    init(slots: Int, maxAge: UInt64) {
        var n = 1
        while n < max(2, slots) { n <<= 1 }
        slotCount = n
        self.maxAge = maxAge
        storage = .allocate(byteCount: n * RetransmissionBuffer.slotSize, alignment: 16)
        sequence = .allocate(capacity: n)
        sequence.initialize(repeating: 0, count: n)
        lengths = .allocate(capacity: n)
        lengths.initialize(repeating: 0, count: n)
        stored = .allocate(capacity: n)
        stored.initialize(repeating: 0, count: n)
    }

    deinit {
        storage.deallocate()
        sequence.deallocate()
        lengths.deallocate()
        stored.deallocate()
    }

    /// Bytes held for packet memory (for the memory report).
    var byteCount: Int { slotCount * (RetransmissionBuffer.slotSize + 12) }

    /// Keeps a copy of the (unprotected) packet.
    @inline(__always)
    func store(_ packet: UnsafeRawPointer, length: Int, sequenceNumber: UInt16, now: UInt64) {
        guard length <= RetransmissionBuffer.slotSize else { return }
        let i = Int(sequenceNumber) & (slotCount - 1)
        (storage + i * RetransmissionBuffer.slotSize).copyMemory(from: packet, byteCount: length)
        sequence[i] = sequenceNumber
        lengths[i] = UInt16(length)
        stored[i] = now | 1  // never zero, so zero means empty
    }

    /// True when a packet with this number is held and fresh (a retransmission we already have).
    @inline(__always)
    func contains(_ sequenceNumber: UInt16, now: UInt64) -> Bool {
        let i = Int(sequenceNumber) & (slotCount - 1)
        return stored[i] != 0 && sequence[i] == sequenceNumber && now &- stored[i] <= maxAge
    }

    /// The packet with this number if it is held and younger than `maxAge`.
    @inline(__always)
    func packet(_ sequenceNumber: UInt16, now: UInt64) -> UnsafeRawBufferPointer? {
        let i = Int(sequenceNumber) & (slotCount - 1)
        guard stored[i] != 0, sequence[i] == sequenceNumber, now &- stored[i] <= maxAge else { return nil }
        return UnsafeRawBufferPointer(start: storage + i * RetransmissionBuffer.slotSize, count: Int(lengths[i]))
    }

    func clear() {
        stored.update(repeating: 0, count: slotCount)
    }
}
