import Dispatch
import Synchronization

/// Offline text-to-speech with espeak-ng, off the packet path.
///
/// Requests run on a small pool of threads (`workers` serial queues, round robin); results stream
/// to the caller as chunks of 20 ms frames at the requested rate, one chunk per SSML segment, so
/// playback can start after the first sentence. espeak-ng keeps one synthesizer per process, so
/// the synthesis step itself is serialized; the pool overlaps it with resampling and framing and
/// keeps slow requests from blocking whoever asks. Validation (language, style, SSML) happens
/// before anything is queued and fails with a typed error.
public final class SpeechSynthesizer: Sendable {
    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)

    public init(workers: Int = 2) {
        queues = (0..<max(1, workers)).map { DispatchQueue(label: "switchboard.speech.\($0)") }
    }

    /// A validated request, ready to render.
    public struct Plan: Sendable {
        public let segments: [SpeechSegment]
        public let voice: String
        public let wordsPerMinute: Int32
    }

    /// Checks a request and reads its SSML; throws what the caller should report.
    public static func plan(_ request: SpeechRequest) throws(SpeechError) -> Plan {
        guard request.text.count <= SpeechRequest.maximumCharacters else {
            throw .tooLong(characters: request.text.count, limit: SpeechRequest.maximumCharacters)
        }
        let language = try SpeechLanguage(code: request.language)
        let voice = try language.voiceName(style: request.style)
        let segments = SSMLReader.isSSML(request.text) ? try SSMLReader.segments(request.text) : SSMLReader.plain(request.text)
        return Plan(segments: segments, voice: voice, wordsPerMinute: Int32(max(80, min(450, request.wordsPerMinute))))
    }

    /// Starts synthesizing; `deliver` is called on a pool thread with each chunk, the last one with
    /// `isLast` set.
    public func synthesize(_ request: SpeechRequest, rate: SampleRate, deliver: @escaping @Sendable (SpeechChunk) -> Void) throws(SpeechError) {
        let plan = try Self.plan(request)
        let queue = queues[next.wrappingAdd(1, ordering: .relaxed).oldValue % queues.count]
        queue.async {
            var framer = Framer(rate: rate)
            do throws(SpeechError) {
                for segment in plan.segments {
                    let samples = try Self.render(segment, voice: plan.voice, wordsPerMinute: plan.wordsPerMinute, rate: rate)
                    let frames = framer.push(samples)
                    if !frames.isEmpty { deliver(SpeechChunk(frames: frames, isLast: false, error: nil)) }
                }
                deliver(SpeechChunk(frames: framer.finish(), isLast: true, error: nil))
            } catch {
                deliver(SpeechChunk(frames: framer.finish(), isLast: true, error: error))
            }
        }
    }

    /// Synthesizes a whole request and returns every frame.
    public func synthesize(_ request: SpeechRequest, rate: SampleRate) async throws(SpeechError) -> [AudioFrame] {
        let result: Result<[AudioFrame], SpeechError> = await withCheckedContinuation { continuation in
            let collected = Mutex<[AudioFrame]>([])
            do throws(SpeechError) {
                try synthesize(request, rate: rate) { chunk in
                    collected.withLock { $0.append(contentsOf: chunk.frames) }
                    if chunk.isLast {
                        if let error = chunk.error { continuation.resume(returning: .failure(error)) }
                        else { continuation.resume(returning: .success(collected.withLock { $0 })) }
                    }
                }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }

    /// Renders one segment to samples at `rate`, on the calling thread (blocks while espeak works).
    public static func render(_ segment: SpeechSegment, voice: String, wordsPerMinute: Int32 = 165, rate: SampleRate) throws(SpeechError) -> [Int16] {
        switch segment {
        case let .pause(ms):
            return [Int16](repeating: 0, count: ms * rate.rawValue / 1000)
        case let .text(text):
            let (samples, engineRate) = try EspeakEngine.render(text, voice: voice, wordsPerMinute: wordsPerMinute)
            return try EspeakEngine.convert(samples, from: engineRate, to: rate.rawValue)
        }
    }

    /// Cuts a sample stream into 20 ms frames, carrying the remainder between pushes.
    struct Framer {
        let rate: SampleRate
        var pending: [Int16] = []

        mutating func push(_ samples: [Int16]) -> [AudioFrame] {
            pending += samples
            let n = rate.samplesPerFrame
            let whole = pending.count / n
            var frames: [AudioFrame] = []
            frames.reserveCapacity(whole)
            for f in 0..<whole {
                // Exactly one frame's length: cannot fail.
                if let frame = try? AudioFrame(rate: rate, samples: Array(pending[(f * n)..<((f + 1) * n)])) { frames.append(frame) }
            }
            pending.removeFirst(whole * n)
            return frames
        }

        mutating func finish() -> [AudioFrame] {
            guard !pending.isEmpty else { return [] }
            pending += [Int16](repeating: 0, count: rate.samplesPerFrame - pending.count)
            return push([])
        }
    }
}
