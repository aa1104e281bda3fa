/// A small xorshift generator for packet-path decisions (test drop hook, jitter in timers).
///
/// Not for secrets: ICE credentials and SSRCs come from `SystemRandom`. Seeded by the
/// owner so tests are repeatable.
struct FastRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    @inline(__always)
    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    /// Uniform in [0, 1).
    @inline(__always)
    mutating func unit() -> Double { Double(next() >> 11) * (1.0 / 9_007_199_254_740_992.0) }
}
