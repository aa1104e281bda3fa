import Audio
import Foundation
import Wire

/// What listening for speech on a leg came to: the `speech` object of the input's result.
public struct SpeechOutcome: Sendable, Equatable {
    public struct Result: Sendable, Equatable {
        public var text: String
        /// 0 to 1.
        public var confidence: Double
        public init(text: String, confidence: Double) {
            self.text = text
            self.confidence = confidence
        }
    }

    /// `end_on_silence_timeout`, `max_duration` or `start_timeout`.
    public var timeoutReason: String?
    public var results: [Result]
    /// Why nothing could be recognised.
    public var error: String?
    /// Where what was said can be fetched (`saveAudio`).
    public var recordingURL: String?

    public init(timeoutReason: String? = nil, results: [Result] = [], error: String? = nil, recordingURL: String? = nil) {
        self.timeoutReason = timeoutReason
        self.results = results
        self.error = error
        self.recordingURL = recordingURL
    }

    /// As the Voice API sends it: the confidence a decimal string.
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let timeoutReason { o["timeout_reason"] = .string(timeoutReason) }
        o["results"] = .array(results.map { ["text": .string($0.text), "confidence": .string(String(format: "%.6f", $0.confidence))] })
        if let error { o["error"] = .string(error) }
        if let recordingURL { o["recording_url"] = .string(recordingURL) }
        return .object(o)
    }
}

extension SpeechOutcome {
    /// What an utterance comes to, off the media path: kept as a recording (`saveAudio`; `keep` gives its URL)
    /// and recognised, unless nothing was said.
    public static func of(_ ending: SpeechEndpointer.Ending, samples: [Int16], rate: Int, speech: NCCOAction.Input.Speech,
                          recognizer: SpeechRecognizer, keep: ([Int16]) throws(CallMediaError) -> String) async -> SpeechOutcome {
        var outcome = SpeechOutcome(timeoutReason: ending.rawValue)
        guard ending != .startTimeout else { return outcome }
        if speech.saveAudio {
            do throws(CallMediaError) { outcome.recordingURL = try keep(samples) } catch { outcome.error = error.description }
        }
        do throws(RecognitionError) {
            let results = try await recognizer.recognize(samples, rate: rate, language: speech.language, context: speech.context)
            outcome.results = results.map { Result(text: $0.text, confidence: $0.confidence) }
        } catch {
            outcome.error = error.description
        }
        return outcome
    }
}

extension NCCOAction.Input.Speech {
    /// How media finds the utterance.
    public var endpointing: SpeechEndpointer.Settings {
        SpeechEndpointer.Settings(startTimeout: Double(startTimeout), endOnSilence: endOnSilence, maxDuration: Double(maxDuration),
                                  sensitivity: sensitivity)
    }
}
