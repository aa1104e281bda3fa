/// Latency samples in fixed buckets (default 10 µs up to 200 ms; beyond goes to the last
/// bucket), so recording is a counter increment and percentiles need no sorting.
///
/// Recorded on the packet path (a worker's forwarding latency) and per packet by the load
/// generator (MediaLoad), so `record` is public and inlinable.
public struct LatencyHistogram: Sendable {
    public let bucketNanoseconds: UInt64
    @usableFromInline var buckets: [UInt64]
    @usableFromInline var samples: UInt64 = 0
    public var count: UInt64 { samples }

    public init(bucketNanoseconds: UInt64 = 10_000, buckets: Int = 20_000) {
        self.bucketNanoseconds = bucketNanoseconds
        self.buckets = [UInt64](repeating: 0, count: buckets)
    }

    @inlinable @inline(__always)
    public mutating func record(_ nanoseconds: UInt64, weight: UInt64 = 1) {
        let i = min(Int(nanoseconds / bucketNanoseconds), buckets.count - 1)
        buckets[i] &+= weight
        samples &+= weight
    }

    public mutating func merge(_ other: LatencyHistogram) {
        for i in 0..<min(buckets.count, other.buckets.count) { buckets[i] &+= other.buckets[i] }
        samples &+= other.samples
    }

    /// The latency below which `fraction` of samples fall, in milliseconds (bucket upper edge).
    public func percentile(_ fraction: Double) -> Double {
        guard count > 0 else { return 0 }
        let target = UInt64((Double(count) * fraction).rounded(.up))
        var seen: UInt64 = 0
        for (i, n) in buckets.enumerated() {
            seen &+= n
            if seen >= max(1, target) { return Double(UInt64(i + 1) * bucketNanoseconds) / 1e6 }
        }
        return Double(UInt64(buckets.count) * bucketNanoseconds) / 1e6
    }
}
