import Wire

/// Reception statistics of one incoming RTP stream (RFC 3550 §6.4.1, appendix A.3 and A.8),
/// for receiver report blocks and for `stats()`; the client SDK's media reports with it too.
package struct ReceiveStatistics {
    let clockRate: UInt32
    package private(set) var packets: UInt64 = 0
    private(set) var bytes: UInt64 = 0
    private(set) var baseSequence: Int64?
    private(set) var highestSequence: Int64 = 0
    private var unwrapper = SequenceNumberUnwrapper()
    /// Interarrival jitter in timestamp units, times 16 (RFC 3550 A.8 keeps it scaled).
    private var jitterQ4: Int64 = 0
    private var lastTransit: Int64?
    // Interval state for `fraction lost`.
    private var expectedPrior: Int64 = 0
    private var receivedPrior: UInt64 = 0
    /// Compact NTP of the last sender report and when it arrived (for LSR/DLSR).
    private(set) var lastSenderReport: UInt32 = 0
    private(set) var lastSenderReportAt: UInt64 = 0

    package init(clockRate: UInt32) { self.clockRate = clockRate }

    @inline(__always)
    package mutating func received(sequence: UInt16, timestamp: UInt32, length: Int, now: UInt64) {
        let extended = unwrapper.unwrap(sequence)
        if baseSequence == nil {
            baseSequence = extended
            highestSequence = extended
        } else if extended > highestSequence {
            highestSequence = extended
        }
        packets += 1
        bytes += UInt64(length)
        // Transit in clock ticks; only differences matter, so the epoch is arbitrary.
        let arrival = Int64(truncatingIfNeeded: (now / 1000) * UInt64(clockRate) / 1_000_000)
        let transit = arrival &- Int64(timestamp)
        if let last = lastTransit {
            var d = transit &- last
            if d < 0 { d = -d }
            if d < Int64(clockRate) * 10 {  // ignore timestamp jumps (source switch)
                jitterQ4 += d - ((jitterQ4 + 8) >> 4)
            }
        }
        lastTransit = transit
    }

    package mutating func senderReportReceived(compactNTP: UInt32, now: UInt64) {
        lastSenderReport = compactNTP
        lastSenderReportAt = now
    }

    /// Jitter in timestamp units.
    var jitter: UInt32 { UInt32(clamping: jitterQ4 >> 4) }
    var expected: Int64 { baseSequence.map { highestSequence - $0 + 1 } ?? 0 }
    var cumulativeLost: Int64 { max(0, expected - Int64(packets)) }

    /// A report block for an RR, advancing the `fraction lost` interval.
    package mutating func reportBlock(ssrc: UInt32, now: UInt64) -> ReportBlock {
        let expectedInterval = expected - expectedPrior
        let receivedInterval = Int64(packets) - Int64(receivedPrior)
        expectedPrior = expected
        receivedPrior = packets
        let lostInterval = expectedInterval - receivedInterval
        let fraction: UInt8 = (expectedInterval <= 0 || lostInterval <= 0)
            ? 0 : UInt8(min(255, (lostInterval << 8) / expectedInterval))
        let delay: UInt32 = lastSenderReportAt == 0
            ? 0 : UInt32(truncatingIfNeeded: ((now &- lastSenderReportAt) << 16) / 1_000_000_000)
        return ReportBlock(
            ssrc: ssrc, fractionLost: fraction, cumulativeLost: Int32(min(cumulativeLost, 0x7F_FFFF)),
            extendedHighestSequence: UInt32(truncatingIfNeeded: highestSequence), jitter: jitter,
            lastSenderReport: lastSenderReport, delaySinceLastSenderReport: delay)
    }
}
