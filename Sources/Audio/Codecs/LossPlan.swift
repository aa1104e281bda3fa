/// The packet loss an Opus encoder plans for (`OpusEncoder.setExpectedLoss`), from what its receivers report:
/// RTCP's fraction lost (RFC 3550 §6.4.1, in 256ths). Planning for loss is not free: at 32 kb/s libopus spends
/// the bits of in-band FEC and loss resilience out of the speech itself (PESQ-WB of speech 3.5–3.6 planned for
/// no loss, 2.9 for 10 %), so an encoder plans for the loss its receivers see, no more.
///
/// Steps of 0, 1, 5, 10, 20 and 30 %, over an average that rises quickly and falls slowly; a step is left
/// downwards only once the average is clearly under it, so one report's noise does not flip the encoder.
public struct LossPlan: Sendable, Equatable {
    public static let steps: [Int32] = [0, 1, 5, 10, 20, 30]

    /// Percent of packets to plan for: one of `steps`.
    public private(set) var percent: Int32
    /// Reported loss, percent, averaged over the reports so far.
    public private(set) var average: Double

    public init(percent: Int32 = 0) {
        self.percent = percent
        average = Double(percent)
    }

    /// Takes one report; true when `percent` changed.
    public mutating func update(fractionLost: UInt8) -> Bool {
        let measured = Double(fractionLost) * 100 / 256
        // Half the way up at once, a fifth of the way down per report.
        average += (measured - average) * (measured > average ? 0.5 : 0.2)
        let target = LossPlan.steps.last { Double($0) <= average } ?? 0
        let next: Int32
        if target > percent {
            next = target
        } else if target < percent, average < Double(percent) * 0.7 {
            next = target
        } else {
            next = percent
        }
        defer { percent = next }
        return next != percent
    }
}
