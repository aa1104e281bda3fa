/// 20 ms of mono 16-bit PCM at one of the `SampleRate`s.
///
/// The samples live in an array allocated once at `init`; every API that fills a frame takes it
/// `inout` and writes in place, so a frame kept by its owner and reused each tick never allocates.
public struct AudioFrame: Sendable, Equatable {
    /// Length of every frame, in milliseconds.
    public static let durationMilliseconds = 20

    public let rate: SampleRate
    /// Exactly `rate.samplesPerFrame` samples.
    public private(set) var samples: [Int16]

    /// A silent frame.
    public init(rate: SampleRate) {
        self.rate = rate
        samples = [Int16](repeating: 0, count: rate.samplesPerFrame)
    }

    /// A frame holding `samples`, which must be one frame long.
    public init(rate: SampleRate, samples: [Int16]) throws(AudioFrameError) {
        guard samples.count == rate.samplesPerFrame else {
            throw .wrongLength(expected: rate.samplesPerFrame, actual: samples.count)
        }
        self.rate = rate
        self.samples = samples
    }

    public var count: Int { samples.count }

    /// Sets every sample to zero.
    public mutating func clear() {
        samples.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
    }

    /// Read access to the samples without copying.
    public func withSamples<R, E: Error>(_ body: (UnsafeBufferPointer<Int16>) throws(E) -> R) throws(E) -> R {
        try samples.withUnsafeBufferPointer { (b) throws(E) -> R in try body(b) }
    }

    /// Write access to the samples in place; the length cannot change.
    public mutating func withMutableSamples<R, E: Error>(_ body: (UnsafeMutableBufferPointer<Int16>) throws(E) -> R) throws(E) -> R {
        try samples.withUnsafeMutableBufferPointer { (b) throws(E) -> R in try body(b) }
    }

    /// Copies one frame's worth of samples from `source` (shorter sources are padded with silence).
    public mutating func copy(from source: UnsafeBufferPointer<Int16>) {
        samples.withUnsafeMutableBufferPointer { dst in
            let n = min(dst.count, source.count)
            for i in 0..<n { dst[i] = source[i] }
            for i in n..<dst.count { dst[i] = 0 }
        }
    }

    /// Multiplies every sample by `gain`, saturating instead of wrapping.
    public mutating func scale(by gain: Float) {
        samples.withUnsafeMutableBufferPointer { b in
            for i in 0..<b.count {
                b[i] = Int16(clamping: Int32((Float(b[i]) * gain).rounded()))
            }
        }
    }
}

/// Why a buffer could not become an `AudioFrame`.
public enum AudioFrameError: Error, Equatable, Sendable {
    case wrongLength(expected: Int, actual: Int)
}
