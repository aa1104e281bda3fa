import Foundation

/// Finds one utterance in a leg's audio, frame by frame, for speech input: waits up to `startTimeout`
/// for speech to begin, then keeps what is said (with a short lead-in before the first voiced frame)
/// until `endOnSilence` seconds of silence or `maxDuration` seconds of speech. Pure: 20 ms frames in
/// (silence when the leg sent nothing, so time is counted in samples), an ending out.
///
/// A frame is voiced when its level is above a threshold set by `sensitivity` (0–100: -20 dBFS at 0,
/// -40 at 50, -60 at 100); speech begins after three voiced frames in a row, so a click does not start it.
/// The utterance's buffer is reserved when listening starts: feeding frames does not allocate.
public struct SpeechEndpointer: Sendable {
    public struct Settings: Sendable, Equatable {
        /// Seconds to wait for speech to begin.
        public var startTimeout: Double
        /// Seconds of silence that end the utterance.
        public var endOnSilence: Double
        /// Longest utterance, in seconds from when speech began.
        public var maxDuration: Double
        /// 0–100: how quiet a sound still counts as speech.
        public var sensitivity: Int

        public init(startTimeout: Double = 10, endOnSilence: Double = 2, maxDuration: Double = 60, sensitivity: Int = 50) {
            self.startTimeout = startTimeout
            self.endOnSilence = endOnSilence
            self.maxDuration = maxDuration
            self.sensitivity = sensitivity
        }
    }

    /// Why listening ended: the Voice API's `speech.timeout_reason`.
    public enum Ending: String, Sendable, Equatable {
        case endOnSilence = "end_on_silence_timeout"
        case maxDuration = "max_duration"
        case startTimeout = "start_timeout"
    }

    public let rate: Int
    public let settings: Settings
    /// The utterance so far (the lead-in while waiting).
    public private(set) var samples: [Int16]
    /// Whether speech has begun.
    public private(set) var speaking = false
    public private(set) var ending: Ending?

    private let leadIn: Int
    private let threshold: Double
    private var waited = 0
    private var voicedRun = 0
    private var silentRun = 0
    private var spoken = 0

    /// Frames of lead-in kept before the first voiced frame: 300 ms.
    static let leadInSeconds = 0.3
    static let framesToStart = 3

    public init(rate: Int, settings: Settings) {
        self.rate = rate
        self.settings = settings
        leadIn = Int(Self.leadInSeconds * Double(rate))
        let dBFS = -20 - 0.4 * Double(max(0, min(100, settings.sensitivity)))
        // Mean square of a full-scale signal at that level.
        threshold = 32768 * 32768 * pow(10, dBFS / 10)
        samples = []
        samples.reserveCapacity(leadIn + Int((settings.maxDuration + Self.leadInSeconds) * Double(rate)) + rate / 50)
    }

    /// The next frame of what the leg said; the ending once listening is over (then frames are ignored).
    public mutating func feed(_ frame: UnsafeBufferPointer<Int16>) -> Ending? {
        guard ending == nil, !frame.isEmpty else { return ending }
        var energy = 0.0
        for s in frame { energy += Double(s) * Double(s) }
        let voiced = energy / Double(frame.count) > threshold
        if !speaking {
            waited += frame.count
            voicedRun = voiced ? voicedRun + 1 : 0
            samples.append(contentsOf: frame)
            let keep = leadIn + Self.framesToStart * frame.count
            if samples.count > keep { samples.removeFirst(samples.count - keep) }
            if voicedRun >= Self.framesToStart {
                speaking = true
                spoken = Self.framesToStart * frame.count
            } else if Double(waited) >= settings.startTimeout * Double(rate) {
                samples.removeAll(keepingCapacity: true)
                ending = .startTimeout
            }
            return ending
        }
        spoken += frame.count
        silentRun = voiced ? 0 : silentRun + frame.count
        if samples.count + frame.count <= samples.capacity { samples.append(contentsOf: frame) }
        if Double(silentRun) >= settings.endOnSilence * Double(rate) {
            ending = .endOnSilence
        } else if Double(spoken) >= settings.maxDuration * Double(rate) {
            ending = .maxDuration
        }
        return ending
    }

    /// Hands the utterance over (the buffer is left empty).
    public mutating func takeSamples() -> [Int16] {
        var out: [Int16] = []
        swap(&out, &samples)
        return out
    }
}
