import Foundation

/// Converts 20 ms frames between 8 kHz (telephone band) and 48 kHz (the mixer's rate) by the exact
/// ratio 6 with one polyphase FIR, instead of a general-purpose resampler.
///
/// Why: every phone line in a mix resamples both ways every tick, and a general resampler sized for
/// arbitrary ratios (speexdsp quality 5: 480 taps per 8 kHz output going down, 80 per 48 kHz output
/// going up) spent most of a bridged call's CPU there. The ratio is an integer, so going down only the
/// kept outputs are computed (120 taps each), and going up each output uses one of six 20-tap phases
/// of the same filter (the zero-stuffed inputs are never multiplied).
///
/// The filter: 120-tap windowed sinc at 48 kHz, cutoff 3.9 kHz, Kaiser window (β = 5). Flat to 3 kHz,
/// −0.3 dB at 3.4 kHz (the telephone band's top), ≥ 54 dB down from 4.6 kHz (what would fold back
/// into the band going down, and the images going up). Delay: 59.5 samples at 48 kHz (1.24 ms) each way.
/// Computed in Float, four lanes at a time; no allocation after `init`.
final class NarrowbandResampler {
    enum Direction { case down, up }

    static let factor = 6
    static let taps = 120
    static let tapsPerPhase = taps / factor

    /// The prototype low-pass, reversed (so each output is a forward dot product), unity gain at DC.
    static let downFilter: [Float] = prototype().reversed().map { Float($0) }
    /// Phase p of the prototype times 6 (the zero-stuffing's gain), each reversed:
    /// `upFilters[p * tapsPerPhase + j]` multiplies input `m + j` for output `6m + p`.
    static let upFilters: [Float] = {
        let h = prototype()
        var out = [Float](repeating: 0, count: taps)
        let gain = Double(factor)
        for p in 0..<factor {
            for i in 0..<tapsPerPhase {
                let at: Int = p * tapsPerPhase + (tapsPerPhase - 1 - i)
                let tap: Double = h[factor * i + p]
                out[at] = Float(gain * tap)
            }
        }
        return out
    }()

    /// The same phases transposed for going up: entry j holds, in lane p, the tap that multiplies input
    /// `m + j` for output `6m + p` (lanes 6 and 7 zero), so one input position yields six outputs from 20
    /// vector multiply-adds and no horizontal sums.
    static let upColumns: [SIMD8<Float>] = (0..<tapsPerPhase).map { j in
        var column = SIMD8<Float>()
        for p in 0..<factor { column[p] = upFilters[p * tapsPerPhase + j] }
        return column
    }

    let direction: Direction
    /// Input history (the last `taps - 1` or `tapsPerPhase - 1` samples) followed by one frame of input.
    private var buffer: [Float]
    private let history: Int
    private let frameIn: Int

    init(_ direction: Direction) {
        self.direction = direction
        switch direction {
        case .down:
            history = Self.taps - 1
            frameIn = SampleRate.hz48000.samplesPerFrame
        case .up:
            history = Self.tapsPerPhase - 1
            frameIn = SampleRate.hz8000.samplesPerFrame
        }
        buffer = [Float](repeating: 0, count: history + frameIn)
    }

    /// `source` is one frame at the input rate (960 samples going down, 160 going up); `destination` one
    /// frame at the output rate.
    func process(_ source: UnsafeBufferPointer<Int16>, into destination: UnsafeMutableBufferPointer<Int16>) {
        let history = history, frameIn = frameIn
        buffer.withUnsafeMutableBufferPointer { buf in
            let n = min(source.count, frameIn)
            for i in 0..<n { buf[history + i] = Float(source[i]) }
            for i in n..<frameIn { buf[history + i] = 0 }
            let base = UnsafeRawPointer(buf.baseAddress!)
            switch direction {
            case .down:
                Self.downFilter.withUnsafeBufferPointer { h in
                    let coefficients = UnsafeRawPointer(h.baseAddress!)
                    let outputs = min(destination.count, frameIn / Self.factor)
                    for k in 0..<outputs {
                        destination[k] = Self.saturate(Self.dot(base + 4 * Self.factor * k, coefficients, count: Self.taps))
                    }
                    for k in outputs..<destination.count { destination[k] = 0 }
                }
            case .up:
                Self.upColumns.withUnsafeBufferPointer { columns in
                    let x = buf.baseAddress!
                    let inputs = min(frameIn, destination.count / Self.factor)
                    for m in 0..<inputs {
                        var acc = SIMD8<Float>()
                        for j in 0..<Self.tapsPerPhase { acc += columns[j] * SIMD8(repeating: x[m + j]) }
                        let out = Self.factor * m
                        for p in 0..<Self.factor { destination[out + p] = Self.saturate(acc[p]) }
                    }
                    for k in (Self.factor * inputs)..<destination.count { destination[k] = 0 }
                }
            }
            // Keep the last `history` inputs for the next frame.
            for i in 0..<history { buf[i] = buf[frameIn + i] }
        }
    }

    /// Forgets the history (silence before the next frame).
    func reset() {
        buffer.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
    }

    /// Σ x[i]·h[i] for `count` (a multiple of 4) Floats, four lanes at a time.
    @inline(__always)
    private static func dot(_ x: UnsafeRawPointer, _ h: UnsafeRawPointer, count: Int) -> Float {
        var acc = SIMD4<Float>()
        var offset = 0
        while offset < 4 * count {
            acc += x.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self) * h.loadUnaligned(fromByteOffset: offset, as: SIMD4<Float>.self)
            offset += 16
        }
        return acc.sum()
    }

    /// Nearest Int16, saturating. Adds ±0.5 and truncates: `rounded()` is a libm call on baseline x86-64.
    @inline(__always)
    private static func saturate(_ y: Float) -> Int16 {
        let clamped = max(-32768, min(32767, y))
        return Int16(clamped + (clamped < 0 ? -0.5 : 0.5))
    }

    /// Kaiser-windowed sinc, `taps` long, cutoff 3.9 kHz at 48 kHz, normalised to unity DC gain.
    static func prototype() -> [Double] {
        let cutoff = 3900.0 / 48_000.0
        let beta = 5.0
        let centre = Double(taps - 1) / 2
        var h = (0..<taps).map { i -> Double in
            let t = Double(i) - centre
            let sinc = t == 0 ? 2 * cutoff : sin(2 * Double.pi * cutoff * t) / (Double.pi * t)
            let r = t / centre
            return sinc * besselI0(beta * (1 - r * r).squareRoot()) / besselI0(beta)
        }
        let sum = h.reduce(0, +)
        for i in h.indices { h[i] /= sum }
        return h
    }

    /// Modified Bessel function of the first kind, order 0 (power series; converges fast for β ≤ 10).
    private static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        let half = x / 2
        while term > 1e-12 * sum {
            term *= (half / k) * (half / k)
            sum += term
            k += 1
        }
        return sum
    }
}
