import CShims

/// Software prefetch for the fan-out loops. A producer forwarding to hundreds of
/// subscribers walks a chain per subscriber (consumer → transport → SRTP sender → cipher
/// state), and with that many subscribers none of it is still in the cache from the last
/// packet. Each step of the chain is requested a few subscribers ahead, one level per
/// iteration, so the loads overlap with the current subscriber's work instead of stalling it.
enum Prefetch {
    /// Prefetches the first `lines` cache lines of an object or buffer.
    @inline(__always)
    static func object(_ p: UnsafeRawPointer, lines: Int) {
        for line in 0..<lines { sb_prefetch(p + line * 64) }
    }

    /// Runs `body` for every consumer of `list` in order while prefetching ahead: the consumer
    /// four ahead, its transport three ahead, the transport's destination and SRTP sender two
    /// ahead, the sender's key and stream state one ahead. References are borrowed, not retained.
    @inline(__always)
    static func forEach(_ list: UnsafeBufferPointer<Consumer>, _ body: (Consumer) -> Void) {
        guard let base = list.baseAddress else { return }
        let n = list.count
        let raw = UnsafeRawPointer(base).assumingMemoryBound(to: UnsafeRawPointer.self)
        @inline(__always) func at(_ i: Int, _ step: (Consumer) -> Void) {
            Unmanaged<Consumer>.fromOpaque(raw[i])._withUnsafeGuaranteedRef(step)
        }
        for i in 0..<n {
            if i + 4 < n { object(raw[i + 4], lines: 3) }
            if i + 3 < n { at(i + 3) { object($0.transportHandle.toOpaque(), lines: 6) } }
            if i + 2 < n { at(i + 2) { $0.transportHandle._withUnsafeGuaranteedRef { $0.prefetchSender() } } }
            if i + 1 < n { at(i + 1) { $0.transportHandle._withUnsafeGuaranteedRef { $0.prefetchSendState() } } }
            at(i, body)
        }
    }
}
