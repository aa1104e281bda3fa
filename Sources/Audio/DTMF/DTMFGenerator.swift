/// In-band DTMF: plays queued keys as dual tones (ITU-T Q.23) into 20 ms frames.
public struct DTMFGenerator: Sendable {
    public let rate: SampleRate
    public let toneMilliseconds: Int
    public let gapMilliseconds: Int
    public let level: Double
    private var queue: [DTMFDigit] = []
    private var current: ToneGenerator?

    /// Each key sounds `toneMilliseconds` then `gapMilliseconds` of silence; `level` in dBFS per tone.
    public init(rate: SampleRate, toneMilliseconds: Int = 100, gapMilliseconds: Int = 100, level: Double = -10) {
        self.rate = rate
        self.toneMilliseconds = toneMilliseconds
        self.gapMilliseconds = gapMilliseconds
        self.level = level
    }

    /// Queues keys; characters that are not DTMF keys are skipped.
    public mutating func enqueue(_ digits: String) {
        queue.append(contentsOf: digits.compactMap(DTMFDigit.init(character:)))
    }

    public mutating func enqueue(_ digit: DTMFDigit) { queue.append(digit) }

    /// True while keys remain to be played.
    public var isActive: Bool { current != nil || !queue.isEmpty }

    /// Fills `frame` with the next 20 ms: tones while keys remain, silence after.
    public mutating func fill(_ frame: inout AudioFrame) {
        if current == nil || current!.isFinished {
            current = nil
            if !queue.isEmpty {
                let d = queue.removeFirst()
                current = ToneGenerator(ToneCadence([.init([d.rowFrequency, d.columnFrequency], milliseconds: toneMilliseconds),
                                                     .silence(gapMilliseconds)], repeats: false), rate: rate, level: level)
            }
        }
        if current != nil {
            current!.fill(&frame)
            if current!.isFinished { current = nil }
        } else {
            frame.clear()
        }
    }
}
