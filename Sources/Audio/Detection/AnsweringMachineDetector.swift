/// Tells a person from an answering machine by how the far end starts talking after it answers, from
/// 20 ms frames of its decoded audio (any rate). Sans-I/O and allocation-free: the owner feeds frames
/// as they arrive and acts on the first verdict.
///
/// A person says something short ("Hello?") and waits; a voicemail greeting talks on ("Hi, you've
/// reached…") with only short pauses. So, from the first voiced frame:
///
/// ```
///   silence ≥ afterGreetingSilence after ≤ greeting of voice   → human
///   more than `greeting` of voice without such a silence        → machine
///   no voice at all within `initialSilence`                     → human (someone who picked up, silent)
///   no verdict within `totalAnalysis`                           → human
/// ```
///
/// A frame is voiced when its mean absolute amplitude reaches `voiceThreshold` (the usual 256 of 32768:
/// about −42 dBFS, well above a phone line's idle noise). Defaults follow the widely used telephony
/// heuristics (greeting 1.5 s, 0.8 s of silence after it, 5 s in all).
public struct AnsweringMachineDetector: Sendable {
    public enum Verdict: Sendable, Equatable {
        case human
        case machine
    }

    public struct Settings: Sendable, Equatable {
        public var initialSilence = 3500
        public var greeting = 1500
        public var afterGreetingSilence = 800
        public var totalAnalysis = 5000
        public var voiceThreshold = 256
        public init() {}
    }

    public let settings: Settings
    /// Milliseconds of audio fed so far.
    public private(set) var elapsed = 0
    /// Milliseconds of voice since the far end started talking.
    public private(set) var voiced = 0
    private var silenceRun = 0
    private var started = false
    public private(set) var verdict: Verdict?

    public init(settings: Settings = Settings()) {
        self.settings = settings
    }

    /// Feeds one 20 ms frame; returns the verdict once, on the frame that decides it.
    public mutating func feed(_ samples: UnsafeBufferPointer<Int16>) -> Verdict? {
        guard verdict == nil, !samples.isEmpty else { return nil }
        elapsed += 20
        if Self.meanAbsolute(samples) >= settings.voiceThreshold {
            started = true
            voiced += 20
            silenceRun = 0
        } else {
            silenceRun += 20
        }
        let decided: Verdict?
        if !started {
            decided = elapsed >= settings.initialSilence ? .human : nil
        } else if voiced > settings.greeting {
            decided = .machine
        } else if silenceRun >= settings.afterGreetingSilence {
            decided = .human
        } else {
            decided = elapsed >= settings.totalAnalysis ? .human : nil
        }
        verdict = decided
        return decided
    }

    static func meanAbsolute(_ samples: UnsafeBufferPointer<Int16>) -> Int {
        var sum = 0
        for x in samples { sum += abs(Int(x)) }
        return sum / samples.count
    }
}

/// Finds a voicemail's "leave a message" beep: a loud pure tone (one frequency between 300 and 3000 Hz
/// carrying most of the frame's energy) held steady for `minimumLength` milliseconds. Speech, whose
/// energy spreads over harmonics and moves, does not pass; DTMF (two tones) does not either.
/// Sans-I/O and allocation-free, like the detector above.
public struct BeepDetector: Sendable {
    public var minimumLength = 160
    /// Mean square (full scale sine = 0.5) a beep frame reaches: about −30 dBFS.
    public var minimumEnergy = 0.001
    /// Share of the frame's energy the tone carries.
    public var minimumPurity = 0.6
    private var run = 0
    private var runFrequency = 0.0
    public private(set) var found = false

    public init() {}

    /// Feeds one 20 ms frame at `rate`; true once, on the frame that completes a beep.
    public mutating func feed(_ samples: UnsafeBufferPointer<Int16>, rate: Int) -> Bool {
        guard !found, samples.count > 1 else { return false }
        guard let frequency = tone(samples, rate: rate) else {
            run = 0
            return false
        }
        if run > 0, abs(frequency - runFrequency) <= max(30, runFrequency * 0.05) {
            run += 20
        } else {
            run = 20
            runFrequency = frequency
        }
        if run >= minimumLength { found = true }
        return found
    }

    /// The frame's frequency when it is one loud pure tone, else nil. The zero crossings estimate the
    /// frequency (to ±25 Hz in 20 ms); Goertzel around the estimate measures how much energy it holds.
    func tone(_ samples: UnsafeBufferPointer<Int16>, rate: Int) -> Double? {
        let energy = Goertzel.energy(samples)
        guard energy >= minimumEnergy else { return nil }
        var crossings = 0
        for i in 1..<samples.count where (samples[i - 1] < 0) != (samples[i] < 0) { crossings += 1 }
        let estimate = Double(crossings) * Double(rate) / (2 * Double(samples.count))
        guard (300...3000).contains(estimate) else { return nil }
        var best = 0.0
        for offset in [-25.0, 0, 25] {
            best = max(best, Goertzel(frequency: estimate + offset, sampleRate: rate).power(samples))
        }
        // A sine's Goertzel power is amplitude²/4, its mean square amplitude²/2.
        return 2 * best >= minimumPurity * energy ? estimate : nil
    }
}
