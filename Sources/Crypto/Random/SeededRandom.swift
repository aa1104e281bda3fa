import Synchronization

/// A deterministic, non-cryptographic source (SplitMix64) for tests and simulations.
public final class SeededRandom: RandomSource {
    private let state: Mutex<UInt64>

    public init(seed: UInt64) { state = Mutex(seed) }

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        state.withLock { s in
            var i = 0
            while i < buffer.count {
                s &+= 0x9E37_79B9_7F4A_7C15
                var z = s
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                for _ in 0..<8 where i < buffer.count {
                    buffer[i] = UInt8(truncatingIfNeeded: z)
                    z >>= 8
                    i += 1
                }
            }
        }
    }
}
