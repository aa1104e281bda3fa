import Audio
import Foundation
import Synchronization

/// Writes what it hears to a 16-bit mono 48 kHz WAV file (every member mixed) when `finish()` is called.
public final class WAVRecorder: AudioSink {
    public let path: String
    private let recorded = Mutex<[Int32]>([])
    private let start = ContinuousClock.now

    public init(path: String) { self.path = path }

    public func receive(_ frame: AudioFrame, from member: String) {
        // Frames land at their arrival time, so two members talking at once are mixed.
        let offset = Int((ContinuousClock.now - start) / .milliseconds(20)) * frame.count
        recorded.withLock { mix in
            if mix.count < offset + frame.count { mix.append(contentsOf: repeatElement(0, count: offset + frame.count - mix.count)) }
            frame.withSamples { s in for i in 0..<s.count { mix[offset + i] += Int32(s[i]) } }
        }
    }

    /// The samples so far.
    public var samples: [Int16] { recorded.withLock { $0.map { Int16(clamping: $0) } } }

    /// Writes the file (through Audio's `WAVFileWriter`).
    public func finish() throws(AudioFileError) {
        let writer = try WAVFileWriter(path: path, sampleRate: 48_000)
        let samples = samples
        try samples.withUnsafeBufferPointer { (b) throws(AudioFileError) in try writer.write(b) }
        try writer.finish()
    }
}

/// The level of what each member sends, in dBov (0 = full scale, -127 = silence), and the
/// dominant frequency of the last frames (a zero-crossing estimate: good for tones). Both are the median of
/// the last five frames' values, so one concealed or glitched frame does not move them.
public final class LevelMeter: AudioSink {
    public struct Reading: Sendable, Hashable {
        public var dBov: Double
        public var frequency: Double
        public var frames: Int
    }
    private static let window = 5
    /// Per member: the latest reading and the last `window` frames' levels and frequency estimates, oldest first.
    private let meters = Mutex<[String: (reading: Reading, recent: [(dBov: Double, frequency: Double)])]>([:])

    public init() {}

    public func receive(_ frame: AudioFrame, from member: String) {
        var energy = 0.0
        var crossings = 0
        frame.withSamples { s in
            for i in 0..<s.count {
                energy += Double(s[i]) * Double(s[i])
                if i > 0, (s[i - 1] < 0) != (s[i] < 0) { crossings += 1 }
            }
        }
        let rms = (energy / Double(frame.count)).squareRoot()
        let db = rms > 0 ? max(-127, 20 * log10(rms / 32768)) : -127
        let estimate = Double(crossings) / 2 / (Double(AudioFrame.durationMilliseconds) / 1000)
        meters.withLock { m in
            var recent = m[member]?.recent ?? []
            if recent.count == LevelMeter.window { recent.removeFirst() }
            recent.append((db, estimate))
            let frames = (m[member]?.reading.frames ?? 0) + 1
            let median = { (values: [Double]) in values.sorted()[values.count / 2] }
            m[member] = (Reading(dBov: median(recent.map(\.dBov)), frequency: median(recent.map(\.frequency)), frames: frames), recent)
        }
    }

    /// The latest reading per member.
    public var levels: [String: Reading] { meters.withLock { $0.mapValues(\.reading) } }
}

/// Hands every frame to a closure.
public final class CallbackSink: AudioSink {
    private let body: @Sendable (AudioFrame, String) -> Void
    public init(_ body: @escaping @Sendable (AudioFrame, String) -> Void) { self.body = body }
    public func receive(_ frame: AudioFrame, from member: String) { body(frame, member) }
}
