import Foundation
import Synchronization
import Testing
@testable import Audio

@Suite("Text to speech", .serialized)
struct SpeechTests {
    static let synthesizer = SpeechSynthesizer(workers: 2)

    /// The interop venv's Python, which has pocketsphinx (scripts/setup --test).
    static var python: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".venv/bin/python").path
    }
    static var recognizer: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("interop/recognize_digits.py").path
    }

    /// en-US styles the check runs with. espeak-ng's plain voice (style 0) is the least natural and
    /// pocketsphinx misreads it too often to gate on; these three variants it reads reliably.
    static let recognisedStyles = [1, 2, 3]

    @Test("\"one two three four\" in en-US is recognised back offline", arguments: recognisedStyles)
    func recognised(style: Int) async throws {
        let start = ContinuousClock.now
        let frames = try await Self.synthesizer.synthesize(SpeechRequest(text: "one two three four", language: "en-US", style: style), rate: .hz16000)
        let elapsed = ContinuousClock.now - start
        let audioSeconds = Double(frames.count) * 0.02
        let compute = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("tts en-US: \(frames.count) frames (\(audioSeconds) s of audio) in \(compute) s — real-time factor \(compute / audioSeconds)")
        let path = AudioFileTests.temporary("speech-\(style).wav")
        let w = try WAVFileWriter(path: path, sampleRate: 16_000)
        for f in frames { try w.write(f) }
        try w.finish()
        let heard = try #require(await AudioFileTests.run([Self.python, Self.recognizer, path]), "recognizer failed")
        #expect(heard.lowercased().split(separator: " ").map(String.init) == ["one", "two", "three", "four"], "heard: \(heard)")
    }

    @Test("other languages speak for a plausible time", arguments: ["en-GB", "es-ES", "fr-FR", "pt-BR", "de-DE", "it-IT"])
    func languages(language: String) async throws {
        let text = ["en-GB": "Good morning, your call is important to us.", "es-ES": "Buenos días, su llamada es importante para nosotros.",
                    "fr-FR": "Bonjour, votre appel est important pour nous.", "pt-BR": "Bom dia, sua ligação é importante para nós.",
                    "de-DE": "Guten Morgen, Ihr Anruf ist uns wichtig.", "it-IT": "Buongiorno, la sua chiamata è importante per noi."][language]!
        let frames = try await Self.synthesizer.synthesize(SpeechRequest(text: text, language: language), rate: .hz8000)
        let seconds = Double(frames.count) * 0.02
        #expect(seconds > 1.2 && seconds < 6, "\(language): \(seconds) s")
        let loud = frames.filter { AudioLevel.level($0) < 50 }.count
        #expect(Double(loud) > Double(frames.count) * 0.4, "\(language): \(loud) of \(frames.count) frames audible")
    }

    @Test("SSML breaks add silence of their length; say-as digits reads one digit at a time")
    func ssml() async throws {
        let plain = try await Self.synthesizer.synthesize(SpeechRequest(text: "<speak>Hello there</speak>"), rate: .hz16000)
        let paused = try await Self.synthesizer.synthesize(SpeechRequest(text: "<speak>Hello <break time=\"1500ms\"/> there</speak>"), rate: .hz16000)
        #expect(abs(Double(paused.count - plain.count) * 20 - 1500) < 300, "\(plain.count) vs \(paused.count) frames")
        // The longest silent run sits where the break is.
        var run = 0, longest = 0
        for f in paused { run = AudioLevel.level(f) >= 80 ? run + 1 : 0; longest = max(longest, run) }
        #expect(longest * 20 >= 1400)

        let gap = SpeechSegment.pause(milliseconds: SSMLReader.characterPauseMilliseconds)
        #expect(try SSMLReader.segments("<speak>Code <say-as interpret-as=\"digits\">12 34</say-as>.</speak>")
                == [.text("Code"), .text("1"), gap, .text("2"), gap, .text("3"), gap, .text("4")])
        let number = try await Self.synthesizer.synthesize(SpeechRequest(text: "<speak><say-as interpret-as=\"digits\">1234</say-as></speak>", style: 1), rate: .hz16000)
        let path = AudioFileTests.temporary("digits.wav")
        let w = try WAVFileWriter(path: path, sampleRate: 16_000)
        for f in number { try w.write(f) }
        try w.finish()
        let heard = try #require(await AudioFileTests.run([Self.python, Self.recognizer, path]))
        #expect(heard.lowercased().split(separator: " ").map(String.init) == ["one", "two", "three", "four"], "heard: \(heard)")
        // Without say-as the same text is a number ("one thousand two hundred…"), not four digits.
        let asNumber = try await Self.synthesizer.synthesize(SpeechRequest(text: "<speak>1234</speak>", style: 1), rate: .hz16000)
        let numberPath = AudioFileTests.temporary("number.wav")
        let w2 = try WAVFileWriter(path: numberPath, sampleRate: 16_000)
        for f in asNumber { try w2.write(f) }
        try w2.finish()
        let heardNumber = try #require(await AudioFileTests.run([Self.python, Self.recognizer, numberPath]))
        #expect(heardNumber.lowercased() != "one two three four", "heard: \(heardNumber)")
    }

    @Test("SSML reading: breaks, entities, unknown tags; malformed input is a typed error")
    func ssmlReader() throws {
        #expect(try SSMLReader.segments("<speak>A &amp; B<break strength=\"strong\"/><prosody rate=\"slow\">C</prosody><s>D</s></speak>")
                == [.text("A & B"), .pause(milliseconds: 750), .text("C"), .text("D"), .pause(milliseconds: 250)])
        #expect(try SSMLReader.segments("<speak><break time=\"60s\"/></speak>") == [.pause(milliseconds: 10_000)])
        #expect(throws: SpeechError.invalidSSML("unclosed <speak>")) { try SSMLReader.segments("<speak>hello") }
        #expect(throws: SpeechError.invalidSSML("unexpected </b>")) { try SSMLReader.segments("<speak><a>x</b></speak>") }
        #expect(throws: SpeechError.invalidSSML("break time soon")) { try SSMLReader.segments("<speak><break time=\"soon\"/></speak>") }
        #expect(throws: SpeechError.invalidSSML("unclosed tag")) { try SSMLReader.segments("<speak") }
        #expect(throws: SpeechError.invalidSSML("unknown entity &nbsp;")) { try SSMLReader.segments("<speak>a&nbsp;b</speak>") }
    }

    @Test("every supported language code has a voice that speaks")
    func everyVoice() throws {
        for code in SpeechLanguage.supportedCodes {
            let plan = try SpeechSynthesizer.plan(SpeechRequest(text: "1", language: code))
            let samples = try SpeechSynthesizer.render(plan.segments[0], voice: plan.voice, rate: .hz8000)
            #expect(samples.count > 800 && Signals.rms(samples) > 300, "\(code) (\(plan.voice))")
        }
    }

    @Test("unknown language or style is a typed error before anything is queued")
    func unknown() {
        #expect(throws: SpeechError.unknownLanguage("xx-XX")) { try Self.synthesizer.synthesize(SpeechRequest(text: "hi", language: "xx-XX"), rate: .hz8000) { _ in } }
        #expect(throws: SpeechError.unknownStyle(language: "en-US", style: 42, available: SpeechLanguage.styleCount)) {
            try Self.synthesizer.synthesize(SpeechRequest(text: "hi", style: 42), rate: .hz8000) { _ in }
        }
        #expect(throws: SpeechError.tooLong(characters: 2000, limit: 1500)) {
            try Self.synthesizer.synthesize(SpeechRequest(text: String(repeating: "a", count: 2000)), rate: .hz8000) { _ in }
        }
    }

    @Test("styles change the voice: the same words at a different pitch")
    func styles() async throws {
        let a = try await Self.synthesizer.synthesize(SpeechRequest(text: "Hello, this is a test.", style: 0), rate: .hz16000)
        let b = try await Self.synthesizer.synthesize(SpeechRequest(text: "Hello, this is a test.", style: 1), rate: .hz16000)
        #expect(a.count > 25 && b.count > 25)
        #expect(a.flatMap(\.samples) != b.flatMap(\.samples))
    }

    @Test("results stream: several chunks for several sentences, the last one flagged")
    func streaming() async throws {
        let chunks = Mutex<[Int]>([])
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, Error>) in
            do {
                try Self.synthesizer.synthesize(SpeechRequest(text: "<speak><s>First sentence.</s><s>Second sentence.</s><s>Third.</s></speak>"), rate: .hz8000) { chunk in
                    chunks.withLock { $0.append(chunk.frames.count) }
                    if chunk.isLast { c.resume() }
                }
            } catch { c.resume(throwing: error) }
        }
        let counts = chunks.withLock { $0 }
        #expect(counts.count >= 4 && counts.dropLast().allSatisfy { $0 > 0 })
    }
}
