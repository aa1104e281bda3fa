import Foundation
@testable import Audio

/// Test signals and measurements shared by the audio suites.
enum Signals {
    /// `count` samples of a sine at `frequency` with peak `amplitude`, starting at sample `offset`.
    static func sine(_ frequency: Double, rate: Int, count: Int, amplitude: Double = 10_000, offset: Int = 0) -> [Int16] {
        (0..<count).map { i in Int16((amplitude * sin(2 * Double.pi * frequency * Double(i + offset) / Double(rate))).rounded()) }
    }

    /// Frames of a sine, consecutive in phase.
    static func sineFrames(_ frequency: Double, rate: SampleRate, frames: Int, amplitude: Double = 10_000) -> [AudioFrame] {
        let n = rate.samplesPerFrame
        return (0..<frames).map { f in
            try! AudioFrame(rate: rate, samples: sine(frequency, rate: rate.rawValue, count: n, amplitude: amplitude, offset: f * n))
        }
    }

    /// Power of `frequency` in `samples` (Goertzel).
    static func power(_ samples: [Int16], _ frequency: Double, rate: Int) -> Double {
        Goertzel(frequency: frequency, sampleRate: rate).power(samples)
    }

    /// The strongest frequency among `candidates` step apart in [low, high].
    static func dominantFrequency(_ samples: [Int16], rate: Int, low: Double = 100, high: Double = 3000, step: Double = 10) -> Double {
        var best = (low, -1.0)
        var f = low
        while f <= high {
            let p = power(samples, f, rate: rate)
            if p > best.1 { best = (f, p) }
            f += step
        }
        return best.0
    }

    static func rms(_ samples: [Int16]) -> Double {
        guard !samples.isEmpty else { return 0 }
        return (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(samples.count)).squareRoot()
    }

    /// Deterministic pseudo-random numbers (a test must give the same signal every run).
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) * 2 - 1 }
    }
}
