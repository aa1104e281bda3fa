import CPocketSphinx
import Synchronization

/// Live captions of one voice: 20 ms frames in (any rate; read at 16 kHz), captions out as it is spoken.
///
/// An endpointer finds each utterance (speech after a 300 ms lead-in, ended by `endOnSilence` of silence
/// or cut at `maxUtterance`); while it lasts, the frames go into a streaming pocketsphinx decoder with the
/// general English language model, whose best guess so far is a partial caption (with `partials`, when it
/// changed, at most every `partialInterval`) and whose result when the utterance ends is the final one.
/// The decoder is made once (its model takes about half a second to load) and serves every utterance.
/// Not for the packet path: a frame costs the decoder's search, which is why a caller feeds it from a
/// thread of its own.
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
        /// To 16 kHz, made for the rate the frames come at.
        var resampler: Resampler?
        var resampled = AudioFrame(rate: .hz16000)

        init(decoder: OpaquePointer) { self.decoder = decoder }
        deinit { ps_free(decoder) }
    }

    private let state: Mutex<State>
    private let partials: Bool

    public init(partials: Bool, model: String = SpeechRecognizer.defaultModel) throws(RecognitionError) {
        let decoder = try SpeechRecognizer.makeDecoder(model: model, search: .languageModel)
        state = Mutex(State(decoder: decoder))
        self.partials = partials
    }

    static func endpointer() -> SpeechEndpointer {
        SpeechEndpointer(rate: rate, settings: .init(startTimeout: .infinity, endOnSilence: endOnSilence, maxDuration: maxUtterance))
    }

    /// The next 20 ms of the voice; the captions it completes.
    public func feed(_ frame: AudioFrame) -> [Caption] {
        let partials = self.partials
        return state.withLock { st -> [Caption] in
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
                if st.endpointer.speaking {
                    ps_end_utt(st.decoder)
                    if let text = SpeechRecognizer.words(st.decoder) { out.append(Caption(text: text, isFinal: true)) }
                }
                st.endpointer = Self.endpointer()
            }
            return out
        }
    }

    /// The voice has gone: the caption of what was being said, if any.
    public func finish() -> Caption? {
        state.withLock { st -> Caption? in
            guard st.endpointer.speaking else { return nil }
            ps_end_utt(st.decoder)
            st.endpointer = Self.endpointer()
            return SpeechRecognizer.words(st.decoder).map { Caption(text: $0, isFinal: true) }
        }
    }
}
