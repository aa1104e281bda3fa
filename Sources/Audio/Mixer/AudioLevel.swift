import Foundation

/// The RFC 6464 audio level of a frame: −dBov from 0 (loudest) to 127 (silence), where 0 dBov is
/// a full-scale square wave (so a full-scale sine is about 3).
public enum AudioLevel {
    /// Level of `samples`; digital silence gives 127.
    public static func level(_ samples: UnsafeBufferPointer<Int16>) -> UInt8 {
        level(sumOfSquares: sumOfSquares(samples), count: samples.count)
    }

    public static func level(_ frame: AudioFrame) -> UInt8 { frame.withSamples { level($0) } }

    static func sumOfSquares(_ samples: UnsafeBufferPointer<Int16>) -> Int64 {
        var s: Int64 = 0
        for x in samples { s += Int64(x) * Int64(x) }
        return s
    }

    static func level(sumOfSquares: Int64, count: Int) -> UInt8 {
        guard count > 0, sumOfSquares > 0 else { return 127 }
        let meanSquare = Double(sumOfSquares) / Double(count) / (32768.0 * 32768.0)
        let dBov = 10 * log10(meanSquare)
        return UInt8(max(0, min(127, (-dBov).rounded())))
    }
}
