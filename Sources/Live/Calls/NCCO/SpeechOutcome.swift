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

    public init(timeoutReason: String? = nil, results: [Result] = [], error: String? = nil) {
        self.timeoutReason = timeoutReason
        self.results = results
        self.error = error
    }

    /// As the Voice API sends it: the confidence a decimal string.
    public var json: JSONValue {
        var o: [String: JSONValue] = [:]
        if let timeoutReason { o["timeout_reason"] = .string(timeoutReason) }
        o["results"] = .array(results.map { ["text": .string($0.text), "confidence": .string(String(format: "%.6f", $0.confidence))] })
        if let error { o["error"] = .string(error) }
        return .object(o)
    }
}
