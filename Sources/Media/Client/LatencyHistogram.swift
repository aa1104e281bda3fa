/// Latency samples in 10 µs buckets up to 200 ms (beyond goes to the last bucket), so
/// recording is a counter increment and percentiles need no sorting.
public struct LatencyHistogram: Sendable {
    public static let bucketNanoseconds: UInt64 = 10_000
    static let bucketCount = 20_000
    private(set) var buckets: [UInt64]
    public private(set) var count: UInt64 = 0

    public init() { buckets = [UInt64](repeating: 0, count: LatencyHistogram.bucketCount) }

    @inline(__always)
    mutating func record(_ nanoseconds: UInt64) {
        let i = min(Int(nanoseconds / LatencyHistogram.bucketNanoseconds), LatencyHistogram.bucketCount - 1)
        buckets[i] &+= 1
        count &+= 1
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for i in 0..<buckets.count { buckets[i] &+= other.buckets[i] }
        count &+= other.count
    }

    /// The latency below which `fraction` of samples fall, in milliseconds (bucket upper edge).
    public func percentile(_ fraction: Double) -> Double {
        guard count > 0 else { return 0 }
        let target = UInt64((Double(count) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (i, n) in buckets.enumerated() {
            seen &+= n
            if seen >= max(1, target) { return Double(UInt64(i + 1) * LatencyHistogram.bucketNanoseconds) / 1e6 }
        }
        return Double(UInt64(buckets.count) * LatencyHistogram.bucketNanoseconds) / 1e6
    }
}
