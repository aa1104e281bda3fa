import CPocketSphinx
import Foundation
import Synchronization

/// Live captions of one voice: 20 ms frames in (any rate; read at 16 kHz), captions out as it is spoken.
///
/// An endpointer finds each utterance (speech after a 300 ms lead-in, ended by `endOnSilence` of silence
/// or cut at `maxUtterance`); while it lasts, the frames go into a streaming pocketsphinx decoder with the
/// general English language model (a `CaptionModel`'s), whose best guess so far is a partial caption (with
/// `partials`, when it changed, at most every `partialInterval`) and whose result when the utterance ends is
/// the final one. The decoder is made once and serves every utterance. Not for the packet path: a frame
/// costs the decoder's search, which is why a caller feeds it from a thread of its own.
public final class CaptionTranscriber: Sendable {
    public struct Caption: Sendable, Equatable {
        public var text: String
        public var isFinal: Bool

        public init(text: String, isFinal: Bool) {
            self.text = text
            self.isFinal = isFinal
        }
    }

    public static let rate = SpeechRecognizer.rate
    /// Silence that ends a caption's utterance, and the longest one.
    public static let endOnSilence = 0.8
    public static let maxUtterance = 15.0
    /// Audio decoded between two partial captions.
    public static let partialInterval = 0.5

    private final class State {
        let decoder: OpaquePointer
        var endpointer = CaptionTranscriber.endpointer()
        /// Samples of the utterance the decoder has had, and since the last partial caption.
        var fed = 0
        var sincePartial = 0
        var lastPartial = ""
        /// Whether an utterance has ended: until then the decoder normalises with the model's prior cepstral mean.
        var heardOne = false
        /// To 16 kHz, made for the rate the frames come at.
        var resampler: Resampler?
        var resampled = AudioFrame(rate: .hz16000)

        /// Freed by the transcriber under the model's lock (`released`); here only if it never was.
        var released = false

        init(decoder: OpaquePointer) { self.decoder = decoder }
        deinit { if !released { ps_free(decoder) } }
    }

    private let state: Mutex<State>
    private let partials: Bool
    private let language: CaptionModel

    /// A decoder with the acoustic model (about 27 MiB) searching with `language`'s words.
    public init(partials: Bool, language: CaptionModel) throws(RecognitionError) {
        let decoder = try SpeechRecognizer.makeDecoder(model: language.model, search: .none)
        let added = language.turn { lm in ps_set_lm(decoder, "captions", lm) == 0 && ps_set_search(decoder, "captions") == 0 }
        guard added else {
            language.turn { _ in _ = ps_free(decoder) }
            throw .engineFailed("the language model was refused")
        }
        state = Mutex(State(decoder: decoder))
        self.partials = partials
        self.language = language
    }

    static func endpointer() -> SpeechEndpointer {
        SpeechEndpointer(rate: rate, settings: .init(startTimeout: .infinity, endOnSilence: endOnSilence, maxDuration: maxUtterance))
    }

    /// The next 20 ms of the voice; the captions it completes.
    public func feed(_ frame: AudioFrame) -> [Caption] {
        let partials = self.partials
        return language.turn { _ in state.withLock { st -> [Caption] in
            var out: [Caption] = []
            var voice = frame
            if frame.rate != .hz16000 {
                if st.resampler?.input != frame.rate { st.resampler = try? Resampler(from: frame.rate, to: .hz16000) }
                guard let resampler = st.resampler, (try? resampler.process(frame, into: &st.resampled)) != nil else { return [] }
                voice = st.resampled
            }
            let wasSpeaking = st.endpointer.speaking
            let ending = voice.withSamples { st.endpointer.feed($0) }
            if st.endpointer.speaking {
                if !wasSpeaking {
                    guard ps_start_utt(st.decoder) == 0 else { return [] }
                    st.fed = 0
                    st.sincePartial = 0
                    st.lastPartial = ""
                }
                // What the endpointer kept and the decoder has not had yet: the lead-in at first, then this frame.
                let samples = st.endpointer.samples
                let fresh = samples.count - st.fed
                if fresh > 0 {
                    samples.withUnsafeBufferPointer { all in
                        _ = ps_process_raw(st.decoder, all.baseAddress! + st.fed, fresh, 0, 0)
                    }
                    st.fed = samples.count
                    st.sincePartial += fresh
                }
                if partials, ending == nil, Double(st.sincePartial) >= Self.partialInterval * Double(Self.rate) {
                    st.sincePartial = 0
                    if let text = SpeechRecognizer.words(st.decoder), text != st.lastPartial {
                        st.lastPartial = text
                        out.append(Caption(text: text, isFinal: false))
                    }
                }
            }
            if ending != nil {
                if st.endpointer.speaking, let text = Self.endUtterance(st) { out.append(Caption(text: text, isFinal: true)) }
                st.endpointer = Self.endpointer()
            }
            return out
        } }
    }

    /// Ends the decoder's utterance; its words. The decoder normalises each frame by a running mean of the
    /// voice's cepstra (live CMN), which starts at the acoustic model's prior and learns the voice only when an
    /// utterance ends: a voice's first utterance, read against the prior, came back as "the ali tomorrow
    /// morning" for "please call me tomorrow morning", and read again after it as said. So the first one is
    /// decoded twice (its samples are still the endpointer's), the second time with the mean it taught.
    private static func endUtterance(_ st: State) -> String? {
        ps_end_utt(st.decoder)
        if !st.heardOne {
            st.heardOne = true
            let samples = st.endpointer.samples
            if ps_start_utt(st.decoder) == 0 {
                _ = samples.withUnsafeBufferPointer { ps_process_raw(st.decoder, $0.baseAddress, $0.count, 0, 0) }
                ps_end_utt(st.decoder)
            }
        }
        return SpeechRecognizer.words(st.decoder)
    }

    /// Freeing a decoder lets go of its reference to the shared model (a count pocketsphinx keeps without atomics):
    /// in the model's turn, as taking one is, or transcribers made and freed on other threads race on it.
    deinit {
        language.turn { _ in
            state.withLock { st in
                ps_free(st.decoder)
                st.released = true
            }
        }
    }

    /// The voice has gone: the caption of what was being said, if any.
    public func finish() -> Caption? {
        language.turn { _ in state.withLock { st -> Caption? in
            guard st.endpointer.speaking else { return nil }
            let text = Self.endUtterance(st)
            st.endpointer = Self.endpointer()
            return text.map { Caption(text: $0, isFinal: true) }
        } }
    }
}

/// The general English language model, read once (about 60 MiB in memory) and shared by the transcribers made
/// with it. Its scoring keeps scratch state, so they take turns with it (`turn`): transcribers fed from one thread
/// anyway (the voices of one captioned session) lose nothing by sharing one.
public final class CaptionModel: Sendable {
    /// The model, touched only under `lm`'s lock.
    private struct Handle: @unchecked Sendable { let pointer: OpaquePointer }

    /// The acoustic model's directory (with the language model in it).
    let model: String
    private let lm: Mutex<Handle>

    public init(model: String = SpeechRecognizer.defaultModel) throws(RecognitionError) {
        self.model = model
        lm = Mutex(Handle(pointer: try Self.read(model + "/en-us.lm.bin")))
    }

    deinit { lm.withLock { _ = ngram_model_free($0.pointer) } }

    /// Runs `body` with the model, no other transcriber using it meanwhile.
    func turn<R>(_ body: (OpaquePointer) -> R) -> R { lm.withLock { body($0.pointer) } }

    /// Reads the model with the decoder's defaults (its log base, 1.0001, is every decoder's).
    private static func read(_ path: String) throws(RecognitionError) -> OpaquePointer {
        guard FileManager.default.fileExists(atPath: path) else { throw .modelMissing(path) }
        guard let config = cmd_ln_parse_r(nil, ps_args(), 0, nil, 0) else { throw .engineFailed("the decoder's settings were refused") }
        defer { cmd_ln_free_r(config) }
        guard let logmath = logmath_init(1.0001, 0, 1) else { throw .engineFailed("no log table") }
        defer { logmath_free(logmath) }  // the model keeps its own reference
        guard let lm = ngram_model_read(config, path, NGRAM_AUTO, logmath) else { throw .engineFailed("the language model could not be read") }
        return lm
    }
}
