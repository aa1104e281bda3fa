import CPocketSphinx
import Dispatch
import Foundation
import Synchronization

/// What the recognizer heard: the Voice API's `speech.results[]` entry.
public struct RecognitionResult: Sendable, Equatable {
    public var text: String
    /// 0–1: the decoder's posterior probability of the words.
    public var confidence: Double

    public init(text: String, confidence: Double) {
        self.text = text
        self.confidence = confidence
    }
}

/// Why recognition failed.
public enum RecognitionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No acoustic model for the language (only English is installed: en-US and the other `en-*` codes).
    case unsupportedLanguage(String)
    /// The model files are not installed (package `pocketsphinx-en-us`).
    case modelMissing(String)
    /// The decoder could not start or failed.
    case engineFailed(String)

    public var description: String {
        switch self {
        case .unsupportedLanguage(let code): "no speech recognition model for language \(code) (English only: en-US, en-GB…)"
        case .modelMissing(let path): "the speech recognition model is not installed (\(path))"
        case .engineFailed(let what): "speech recognition failed: \(what)"
        }
    }
}

/// Offline speech recognition with pocketsphinx and its US English acoustic model, off the packet path.
///
/// Requests run on a small pool of threads (`workers` serial queues, round robin), each request with a
/// decoder of its own (a decoder's searches carry state from one utterance to the next, which made the
/// first utterance after a change of search come back empty). Without `context` the words are searched
/// with the general English language model (loading it takes about half a second); with it, the
/// utterance is read as a sequence of the context's phrases (a grammar), which is what an IVR menu asks
/// for and what an offline recogniser gets right: phrases with words the dictionary does not know are
/// left out, and a context with none left falls back to the language model.
public final class SpeechRecognizer: Sendable {
    public static let defaultModel = "/usr/share/pocketsphinx/model/en-us"
    /// The decoder's rate.
    static let rate = 16000

    private let queues: [DispatchQueue]
    private let next = Atomic<Int>(0)
    let model: String

    public init(workers: Int = 1, model: String = SpeechRecognizer.defaultModel) {
        queues = (0..<max(1, workers)).map { DispatchQueue(label: "switchboard.recognition.\($0)") }
        self.model = model
    }

    /// Checks a language code (case-insensitive): every English code is read with the US English model.
    public static func validate(language: String) throws(RecognitionError) {
        guard language.lowercased().hasPrefix("en") else { throw .unsupportedLanguage(language) }
    }

    /// Recognises `samples` (mono, `rate` Hz) on a pool thread.
    public func recognize(_ samples: [Int16], rate: Int, language: String = "en-US", context: [String] = []) async throws(RecognitionError) -> [RecognitionResult] {
        try Self.validate(language: language)
        let queue = queues[next.wrappingAdd(1, ordering: .relaxed).oldValue % queues.count]
        let model = self.model
        let result: Result<[RecognitionResult], RecognitionError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(RecognitionError) {
                    continuation.resume(returning: .success(try Self.decode(samples, rate: rate, context: context, model: model)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    enum Search { case none, languageModel }

    /// A decoder with the acoustic model and dictionary, and the search's model (none: a grammar is set later).
    static func makeDecoder(model: String, search: Search) throws(RecognitionError) -> OpaquePointer {
        var files = ["-hmm": model + "/en-us", "-dict": model + "/cmudict-en-us.dict"]
        switch search {
        case .none: break
        case .languageModel: files["-lm"] = model + "/en-us.lm.bin"
        }
        for (_, path) in files where !FileManager.default.fileExists(atPath: path) { throw .modelMissing(path) }
        let arguments = files.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] }
            + ["-samprate", String(rate), "-logfn", "/dev/null"]
        let cStrings = arguments.map { strdup($0) }
        defer { for p in cStrings { free(p) } }
        var argv = cStrings
        guard let config = argv.withUnsafeMutableBufferPointer({ cmd_ln_parse_r(nil, ps_args(), Int32($0.count), $0.baseAddress, 0) }) else {
            throw .engineFailed("the decoder's settings were refused")
        }
        defer { cmd_ln_free_r(config) }  // the decoder keeps its own reference
        guard let decoder = ps_init(config) else { throw .engineFailed("the decoder could not load its model") }
        return decoder
    }

    /// The JSGF grammar reading an utterance as a sequence of `phrases` (already lowercased words).
    static func grammar(_ phrases: [[String]]) -> String {
        let items = phrases.map { $0.joined(separator: " ") }.joined(separator: " | ")
        return "#JSGF V1.0;\ngrammar context;\npublic <utterance> = <item>+;\n<item> = \(items);\n"
    }

    /// A context's phrases as dictionary words: lowercased, punctuation other than apostrophes dropped.
    static func phrases(_ context: [String]) -> [[String]] {
        var seen = Set<[String]>()
        return context.compactMap { phrase in
            let words = phrase.lowercased().split { !($0.isLetter || $0.isNumber || $0 == "'") }.map(String.init)
            guard !words.isEmpty, seen.insert(words).inserted else { return nil }
            return words
        }
    }

    private static func decode(_ samples: [Int16], rate: Int, context: [String], model: String) throws(RecognitionError) -> [RecognitionResult] {
        var audio: [Int16]
        do { audio = try EspeakEngine.convert(samples, from: rate, to: Self.rate) } catch { throw .engineFailed("resampling: \(error)") }
        if rate * 2 == Self.rate { audio = widened(audio, narrowband: samples) }
        if !context.isEmpty {
            let ps = try makeDecoder(model: model, search: .none)
            defer { ps_free(ps) }
            let known = phrases(context).filter { words in
                words.allSatisfy { word in
                    guard let pronunciation = ps_lookup_word(ps, word) else { return false }
                    free(pronunciation)
                    return true
                }
            }
            if !known.isEmpty {
                guard ps_set_jsgf_string(ps, "context", grammar(known)) == 0, ps_set_search(ps, "context") == 0 else {
                    throw .engineFailed("the context's grammar was refused")
                }
                return try run(ps, audio).map { [RecognitionResult(text: $0, confidence: confidence(ps))] } ?? []
            }
        }
        let ps = try makeDecoder(model: model, search: .languageModel)
        defer { ps_free(ps) }
        return try run(ps, audio).map { [RecognitionResult(text: $0, confidence: confidence(ps))] } ?? []
    }

    /// Narrowband (8 kHz) speech upsampled has nothing above 4 kHz, where the 16 kHz model expects the hiss of
    /// s, f and th: "sales" and "support" came back as "billing". The band is given back by spectral folding —
    /// the 0–4 kHz spectrum mirrored into 4–8 kHz at `foldLevel` of its strength (the image zero-stuffing makes,
    /// which the resampler's filter removed). On synthesized menu choices in three voices it took 8 kHz errors
    /// from 23 in 96 to 16 (0 at 16 kHz).
    static func widened(_ upsampled: [Int16], narrowband: [Int16]) -> [Int16] {
        let a = foldLevel
        return upsampled.indices.map { i in
            let zeroStuffed = i % 2 == 0 && i / 2 < narrowband.count ? 2 * Double(narrowband[i / 2]) : 0
            let v = (1 - a) * Double(upsampled[i]) + a * zeroStuffed
            return Int16(max(-32768, min(32767, v.rounded())))
        }
    }

    static let foldLevel = 0.4

    /// What a decoder heard in `audio` (16 kHz): its words, fillers left out.
    static func run(_ ps: OpaquePointer, _ audio: [Int16]) throws(RecognitionError) -> String? {
        guard ps_start_utt(ps) == 0 else { throw .engineFailed("the utterance could not start") }
        let processed = audio.withUnsafeBufferPointer { ps_process_raw(ps, $0.baseAddress, $0.count, 0, 1) }
        ps_end_utt(ps)
        guard processed >= 0 else { throw .engineFailed("the audio could not be decoded") }
        return words(ps)
    }

    /// The decoder's best words so far (in an utterance, or for the one it ended), fillers left out; nil for none.
    static func words(_ ps: OpaquePointer) -> String? {
        var score: Int32 = 0
        guard let hypothesis = ps_get_hyp(ps, &score) else { return nil }
        let text = String(cString: hypothesis).split(separator: " ").filter { !$0.hasPrefix("<") && !$0.hasPrefix("[") }.joined(separator: " ")
        return text.isEmpty ? nil : text
    }

    /// The decoder's posterior probability of its words (a grammar search computes none: 1).
    static func confidence(_ ps: OpaquePointer) -> Double {
        max(0, min(1, logmath_exp(ps_get_logmath(ps), ps_get_prob(ps))))
    }
}
