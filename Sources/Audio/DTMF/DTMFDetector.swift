/// In-band DTMF detection over 20 ms frames with Goertzel filters at the eight Q.23 frequencies.
///
/// A frame holds a key when one row and one column tone each stand well above the other tones of
/// their group, their levels are within twist limits, and together they carry most of the frame's
/// energy (speech and noise spread theirs). A key is reported once, after two consecutive frames
/// (40 ms, the Q.24 minimum) agree, and again only after a frame without it.
public struct DTMFDetector: Sendable {
    public let rate: SampleRate
    private let rows: [Goertzel]
    private let columns: [Goertzel]
    private var candidate: DTMFDigit?
    private var candidateFrames = 0
    private var reported: DTMFDigit?

    /// Mean square (full scale sine = 0.5) below which a frame is silence: about −45 dBFS.
    static let minimumEnergy = 3e-5
    /// Share of the frame's energy the two tones must carry.
    static let minimumToneShare = 0.75
    /// How far above the rest of its group the strongest tone must be (power ratio, about 8 dB).
    static let groupDominance = 6.0
    /// Row/column power ratio limits: 8 dB reverse twist, 8 dB normal twist.
    static let maximumTwist = 6.3

    public init(rate: SampleRate) {
        self.rate = rate
        rows = DTMFDigit.rowFrequencies.map { Goertzel(frequency: $0, sampleRate: rate.rawValue) }
        columns = DTMFDigit.columnFrequencies.map { Goertzel(frequency: $0, sampleRate: rate.rawValue) }
    }

    /// Examines one frame; returns a key when a new press is confirmed.
    public mutating func process(_ frame: AudioFrame) -> DTMFDigit? {
        let digit = frame.withSamples { classify($0) }
        if digit == nil || digit != candidate {
            candidate = digit
            candidateFrames = digit == nil ? 0 : 1
            if digit == nil { reported = nil }
            return nil
        }
        candidateFrames += 1
        if candidateFrames >= 2 && reported != digit {
            reported = digit
            return digit
        }
        return nil
    }

    /// The key a single frame holds, if any.
    func classify(_ samples: UnsafeBufferPointer<Int16>) -> DTMFDigit? {
        let energy = Goertzel.energy(samples)
        guard energy >= Self.minimumEnergy else { return nil }
        func strongest(_ filters: [Goertzel]) -> (index: Int, power: Double, second: Double) {
            var best = (0, -1.0), second = -1.0
            for (i, g) in filters.enumerated() {
                let p = g.power(samples)
                if p > best.1 { second = best.1; best = (i, p) } else if p > second { second = p }
            }
            return (best.0, best.1, second)
        }
        let r = strongest(rows), c = strongest(columns)
        guard r.power >= Self.groupDominance * r.second, c.power >= Self.groupDominance * c.second else { return nil }
        guard r.power <= Self.maximumTwist * c.power, c.power <= Self.maximumTwist * r.power else { return nil }
        // A sine's Goertzel power is amplitude²/4 and its mean square amplitude²/2.
        guard 2 * (r.power + c.power) >= Self.minimumToneShare * energy else { return nil }
        return DTMFDigit.at(row: r.index, column: c.index)
    }
}
