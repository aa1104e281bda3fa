import Foundation

/// The Goertzel algorithm: the power of one frequency in a block of samples, in O(n) with two
/// state variables — cheaper than a DFT when only a few frequencies matter (DTMF's eight).
public struct Goertzel: Sendable, Hashable {
    public let frequency: Double
    public let sampleRate: Int
    private let coefficient: Double

    public init(frequency: Double, sampleRate: Int) {
        self.frequency = frequency
        self.sampleRate = sampleRate
        coefficient = 2 * cos(2 * Double.pi * frequency / Double(sampleRate))
    }

    /// Squared magnitude of `frequency` in `samples`, normalised so a full-scale sine of that
    /// frequency over the block gives about 0.25 (amplitude²/4), independent of the block length.
    public func power(_ samples: UnsafeBufferPointer<Int16>) -> Double {
        var s1 = 0.0, s2 = 0.0
        for x in samples {
            let s0 = Double(x) / 32768 + coefficient * s1 - s2
            s2 = s1
            s1 = s0
        }
        let p = s1 * s1 + s2 * s2 - coefficient * s1 * s2
        let n = Double(samples.count)
        return samples.isEmpty ? 0 : p / (n * n)
    }

    /// `power` over an array.
    public func power(_ samples: [Int16]) -> Double {
        samples.withUnsafeBufferPointer { power($0) }
    }

    /// Mean square of the block (full-scale sine ≈ 0.5), the reference the tone powers are compared to.
    public static func energy(_ samples: UnsafeBufferPointer<Int16>) -> Double {
        guard !samples.isEmpty else { return 0 }
        var e = 0.0
        for x in samples {
            let v = Double(x) / 32768
            e += v * v
        }
        return e / Double(samples.count)
    }
}
