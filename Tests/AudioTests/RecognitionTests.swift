import Testing
@testable import Audio

@Suite("Speech input: endpointing")
struct SpeechEndpointerTests {
    /// Feeds 20 ms frames of `samples` at 8 kHz; returns the ending and after how many frames it came.
    static func run(_ endpointer: inout SpeechEndpointer, _ samples: [Int16]) -> (SpeechEndpointer.Ending?, frames: Int) {
        var frames = 0
        for start in stride(from: 0, to: samples.count, by: 160) {
            frames += 1
            let ending = samples[start..<min(samples.count, start + 160)].withUnsafeBufferPointer { endpointer.feed($0) }
            if let ending { return (ending, frames) }
        }
        return (nil, frames)
    }

    static let silence = [Int16](repeating: 0, count: 8000)  // 1 s
    static func tone(seconds: Double, amplitude: Double = 10_000) -> [Int16] {
        Signals.sine(300, rate: 8000, count: Int(seconds * 8000), amplitude: amplitude)
    }

    @Test("silence: start_timeout after startTimeout seconds, with nothing kept")
    func startTimeout() {
        var e = SpeechEndpointer(rate: 8000, settings: .init(startTimeout: 2))
        let (ending, frames) = Self.run(&e, Self.silence + Self.silence + Self.silence)
        #expect(ending == .startTimeout && frames == 100)
        #expect(e.samples.isEmpty && !e.speaking)
    }

    @Test("speech then silence: end_on_silence after endOnSilence seconds, the utterance kept with its lead-in")
    func endOnSilence() {
        var e = SpeechEndpointer(rate: 8000, settings: .init(startTimeout: 5, endOnSilence: 0.8))
        let (ending, frames) = Self.run(&e, Self.silence + Self.tone(seconds: 1.2) + Self.silence + Self.silence)
        #expect(ending == .endOnSilence)
        #expect(frames == 50 + 60 + 40)
        let kept = e.takeSamples()
        // 300 ms of lead-in, the 1.2 s tone, the 0.8 s of silence that ended it.
        #expect(kept.count == Int((0.3 + 1.2 + 0.8) * 8000))
        #expect(Signals.rms(Array(kept[2400..<12000])) > 5000 && Signals.rms(Array(kept[..<2400])) == 0)
    }

    @Test("a long utterance stops at maxDuration")
    func maxDuration() {
        var e = SpeechEndpointer(rate: 8000, settings: .init(endOnSilence: 2, maxDuration: 1))
        let (ending, frames) = Self.run(&e, Self.tone(seconds: 3))
        #expect(ending == .maxDuration && frames == 50)
        #expect(e.samples.count <= Int(1.3 * 8000) + 160)
    }

    @Test("a click is not speech; sensitivity sets how quiet speech may be")
    func thresholds() {
        var clicked = SpeechEndpointer(rate: 8000, settings: .init(startTimeout: 1))
        #expect(Self.run(&clicked, Self.tone(seconds: 0.04) + Self.silence).0 == .startTimeout)
        // About -46 dBFS: below sensitivity 50's -40 dBFS, above sensitivity 100's -60.
        let quiet = Self.tone(seconds: 1, amplitude: 230) + Self.silence + Self.silence
        var deaf = SpeechEndpointer(rate: 8000, settings: .init(startTimeout: 1.5, endOnSilence: 0.5, sensitivity: 50))
        #expect(Self.run(&deaf, quiet).0 == .startTimeout)
        var keen = SpeechEndpointer(rate: 8000, settings: .init(startTimeout: 1.5, endOnSilence: 0.5, sensitivity: 100))
        #expect(Self.run(&keen, quiet).0 == .endOnSilence)
    }

    @Test("frames after the ending are ignored")
    func ended() {
        var e = SpeechEndpointer(rate: 8000, settings: .init(startTimeout: 1))
        _ = Self.run(&e, Self.silence)
        #expect(Self.run(&e, Self.tone(seconds: 1)) == (.startTimeout, 1))
    }
}

@Suite("Speech input: recognition", .serialized)
struct SpeechRecognizerTests {
    static let recognizer = SpeechRecognizer()

    /// Synthesized speech at 8 kHz, as a phone sends it (espeak-ng's "f2" variant, the voice the model reads best at
    /// 8 kHz: its fricatives are noise, so each synthesis differs a little, and a voice read near the edge would fail
    /// now and then).
    static func spoken(_ text: String, style: Int = 1) async throws -> [Int16] {
        let frames = try await SpeechTests.synthesizer.synthesize(SpeechRequest(text: text, language: "en-US", style: style), rate: .hz8000)
        return frames.flatMap(\.samples)
    }

    @Test("a menu choice said over the phone is recognised among the context's phrases", arguments: ["support", "sales", "billing"])
    func menu(choice: String) async throws {
        let results = try await Self.recognizer.recognize(try await Self.spoken(choice), rate: 8000, context: ["Sales", "Support", "Billing", "speak to an agent"])
        #expect(results.first?.text == choice, "\(results)")
        #expect((results.first?.confidence ?? 0) > 0)
    }

    @Test("digits said in a row, with a context of digit words", arguments: [1, 3])
    func digits(style: Int) async throws {
        let words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
        let results = try await Self.recognizer.recognize(try await Self.spoken("one two three four", style: style), rate: 8000, context: words)
        #expect(results.first?.text == "one two three four", "\(results)")
    }

    @Test("without a context the general language model gives its words (synthesized speech at 8 kHz is not read well: only that some are heard is checked)")
    func dictation() async throws {
        let results = try await Self.recognizer.recognize(try await Self.spoken("hello, I would like to speak to someone", style: 1), rate: 8000)
        print("dictation heard:", results)
        #expect(results.count == 1 && !results[0].text.isEmpty, "\(results)")
    }

    @Test("only English is recognised; unknown context words are left out")
    func languages() async throws {
        await #expect(throws: RecognitionError.unsupportedLanguage("fr-FR")) {
            try await Self.recognizer.recognize([Int16](repeating: 0, count: 8000), rate: 8000, language: "fr-FR")
        }
        let results = try await Self.recognizer.recognize(try await Self.spoken("support"), rate: 8000, language: "en-GB", context: ["xqzzyv", "support"])
        #expect(results.first?.text == "support", "\(results)")
        #expect(SpeechRecognizer.phrases(["Speak to an agent!", "speak to an agent", ""]) == [["speak", "to", "an", "agent"]])
    }

    @Test("wideband speech (16 kHz) is read right in every voice tried", arguments: [1, 2, 3])
    func wideband(style: Int) async throws {
        let menu = ["sales", "support", "billing", "speak to an agent"]
        for text in menu {
            let audio = try await SpeechTests.synthesizer.synthesize(SpeechRequest(text: text, language: "en-US", style: style), rate: .hz16000)
            let results = try await Self.recognizer.recognize(audio.flatMap(\.samples), rate: 16000, context: menu)
            #expect(results.first?.text == text, "\(text): \(results)")
        }
    }

    @Test("narrowband speech gets its upper band back by folding: the 4–8 kHz band is no longer empty")
    func folding() {
        let narrow = Signals.sine(3000, rate: 8000, count: 8000)
        let up = (try? EspeakEngine.convert(narrow, from: 8000, to: 16000)) ?? []
        let wide = SpeechRecognizer.widened(up, narrowband: narrow)
        // 3 kHz folds to 5 kHz.
        #expect(Signals.power(up, 5000, rate: 16000) < Signals.power(wide, 5000, rate: 16000) / 100)
        #expect(Signals.power(wide, 3000, rate: 16000) > Signals.power(wide, 5000, rate: 16000))
    }

    @Test("silence is no words")
    func silence() async throws {
        let results = try await Self.recognizer.recognize([Int16](repeating: 0, count: 16000), rate: 8000, context: ["yes", "no"])
        #expect(results.isEmpty || results.allSatisfy { !$0.text.isEmpty }, "\(results)")
    }
}

@Suite("Live captions: streaming recognition", .serialized)
struct CaptionTranscriberTests {
    static let language = try! CaptionModel()

    static func spoken(_ text: String, rate: SampleRate = .hz16000) async throws -> [Int16] {
        try await SpeechTests.synthesizer.synthesize(SpeechRequest(text: text, language: "en-US", style: 1), rate: rate).flatMap(\.samples)
    }

    /// Feeds `samples` in 20 ms frames at `rate`; every caption, in order.
    static func feed(_ t: CaptionTranscriber, _ samples: [Int16], rate: SampleRate = .hz16000) -> [CaptionTranscriber.Caption] {
        let n = rate.samplesPerFrame
        return stride(from: 0, to: samples.count, by: n).flatMap { start in
            var frame = Array(samples[start..<min(samples.count, start + n)])
            frame += [Int16](repeating: 0, count: n - frame.count)
            return t.feed(try! AudioFrame(rate: rate, samples: frame))
        }
    }

    static func words(_ captions: [CaptionTranscriber.Caption]) -> Set<String> {
        Set(captions.filter(\.isFinal).flatMap { $0.text.split(separator: " ").map(String.init) })
    }

    @Test("two sentences with a pause between: partial captions as each is said, then a final one each")
    func sentences() async throws {
        let t = try CaptionTranscriber(partials: true, language: Self.language)
        let silence = [Int16](repeating: 0, count: 16000)
        let clock = ContinuousClock()
        let started = clock.now
        let audio = try await silence + Self.spoken("the weather is nice today") + silence + Self.spoken("please call me tomorrow morning") + silence
        let captions = Self.feed(t, audio)
        print("captions:", captions.map { "\($0.isFinal ? "F" : "p") \($0.text)" }, "in", clock.now - started, "for", Double(audio.count) / 16000, "s")
        #expect(captions.filter(\.isFinal).count == 2, "\(captions)")
        #expect(captions.first?.isFinal == false, "\(captions)")
        // The voice's first utterance, read again once the decoder knows the voice: before, "where there is a light and airy".
        let finals = captions.filter(\.isFinal)
        #expect(Self.words(Array(finals.prefix(1))).intersection(["the", "weather", "is", "nice", "today"]).count >= 3, "\(captions)")
        // Partial captions grow as words are said; the last one of an utterance is never its final caption repeated.
        let second = captions.drop { !$0.isFinal }.dropFirst()
        #expect(second.count >= 3 && second.last?.isFinal == true, "\(captions)")
        #expect(Self.words(Array(second)).intersection(["please", "call", "me", "tomorrow", "morning"]).count >= 3, "\(captions)")
        #expect(t.finish() == nil, "nothing is being said at the end")
    }

    @Test("48 kHz audio (a session's mix) is read as well; without partials only final captions come; finish() gives what was being said")
    func rates() async throws {
        let t = try CaptionTranscriber(partials: false, language: Self.language)
        let said = try await Self.spoken("please call me tomorrow morning", rate: .hz48000)
        let captions = Self.feed(t, [Int16](repeating: 0, count: 48000) + said + [Int16](repeating: 0, count: 48000), rate: .hz48000)
        print("48 kHz:", captions)
        #expect(captions.count == 1 && captions[0].isFinal, "\(captions)")
        // A fresh voice's first utterance: decoded again once the decoder has learned the voice (see `endUtterance`).
        #expect(Self.words(captions).intersection(["please", "call", "me", "tomorrow", "morning"]).count >= 4, "\(captions)")
        // Cut off mid-sentence (the stream went): the words so far are a final caption.
        #expect(Self.feed(t, [Int16](repeating: 0, count: 24000) + Array(said.prefix(said.count * 2 / 3)), rate: .hz48000).isEmpty)
        let last = try #require(t.finish())
        #expect(last.isFinal && !last.text.isEmpty)
        #expect(t.finish() == nil)
    }

    @Test("two voices sharing one language model, fed in turns, are each read as if alone")
    func shared() async throws {
        let said = [Int16](repeating: 0, count: 8000) + (try await Self.spoken("please call me tomorrow morning")) + [Int16](repeating: 0, count: 16000)
        let other = [Int16](repeating: 0, count: 4000) + (try await Self.spoken("the weather is nice today")) + [Int16](repeating: 0, count: 20000)
        let alone = Self.feed(try CaptionTranscriber(partials: true, language: Self.language), said)
        let (a, b) = (try CaptionTranscriber(partials: true, language: Self.language), try CaptionTranscriber(partials: true, language: Self.language))
        var (heardA, heardB): ([CaptionTranscriber.Caption], [CaptionTranscriber.Caption]) = ([], [])
        for start in stride(from: 0, to: min(said.count, other.count) - 320, by: 320) {
            heardA += a.feed(try AudioFrame(rate: .hz16000, samples: Array(said[start..<start + 320])))
            heardB += b.feed(try AudioFrame(rate: .hz16000, samples: Array(other[start..<start + 320])))
        }
        #expect(heardA == alone && !alone.isEmpty, "\(heardA) vs \(alone)")
        #expect(heardB.filter(\.isFinal).count == 1, "\(heardB)")
    }

    @Test("silence and a quiet hum (below the speech threshold) are no captions")
    func silence() throws {
        let t = try CaptionTranscriber(partials: true, language: Self.language)
        #expect(Self.feed(t, [Int16](repeating: 0, count: 16000 * 5)).isEmpty)
        #expect(Self.feed(t, Signals.sine(120, rate: 16000, count: 16000 * 2, amplitude: 200)).isEmpty)
    }
}
