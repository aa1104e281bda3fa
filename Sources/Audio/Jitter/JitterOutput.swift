/// What the jitter buffer hands the decoder for one 20 ms tick.
public enum JitterOutput: Equatable, Sendable {
    /// The packet due now. The slice shares the buffer's storage: use it before the next insert.
    case packet(sequence: UInt16, timestamp: UInt32, payload: ArraySlice<UInt8>)
    /// Nothing to play although the stream is live: decode with packet-loss concealment. `next` is
    /// the packet after the gap when already buffered (Opus rebuilds the lost frame from its FEC).
    case conceal(sequence: UInt16, next: ArraySlice<UInt8>?)
    /// The stream is idle or still filling: play silence (or skip this input).
    case empty
}
