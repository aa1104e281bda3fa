import Foundation
import Testing
@testable import Audio

@Suite("Answering machine and beep detection")
struct MachineDetectionTests {
    /// Voice-like sound: a gliding 120–180 Hz pitch with five harmonics, in 200 ms syllables 80 ms apart,
    /// for `ms` milliseconds; then silence to `total`.
    static func talk(ms: Int, total: Int, rate: Int = 8000) -> [Int16] {
        (0..<(total * rate / 1000)).map { i in
            let t = Double(i) / Double(rate)
            let inSpeech = i < ms * rate / 1000 && (i * 1000 / rate) % 280 < 200
            guard inSpeech else { return Int16(Double.random(in: -20...20)) }
            let f0 = 150 + 30 * sin(2 * Double.pi * 1.5 * t)
            let v = (1...5).reduce(0.0) { $0 + sin(2 * Double.pi * f0 * Double($1) * t) / Double($1) }
            return Int16(4000 * v)
        }
    }

    /// Runs frames of `samples` through the detector: the verdict and when it came (ms).
    static func verdict(_ samples: [Int16], rate: Int = 8000) -> (AnsweringMachineDetector.Verdict?, Int) {
        var detector = AnsweringMachineDetector()
        let n = rate / 50
        for start in stride(from: 0, to: samples.count - n + 1, by: n) {
            if let v = samples[start..<start + n].withUnsafeBufferPointer({ detector.feed($0) }) { return (v, detector.elapsed) }
        }
        return (nil, detector.elapsed)
    }

    @Test("a short hello then waiting is a person; decided 0.8 s after the hello")
    func human() {
        let (v, at) = Self.verdict(Self.talk(ms: 700, total: 6000))
        #expect(v == .human && (1300...1700).contains(at), "\(String(describing: v)) at \(at) ms")
    }

    @Test("a greeting that talks on is a machine, decided once 1.5 s of voice are heard", arguments: [8000, 48000])
    func machine(rate: Int) {
        let (v, at) = Self.verdict(Self.talk(ms: 4000, total: 6000, rate: rate), rate: rate)
        #expect(v == .machine && (2000...2600).contains(at), "\(String(describing: v)) at \(at) ms")
    }

    @Test("nobody speaking is a person after the initial silence")
    func silence() {
        let (v, at) = Self.verdict([Int16](repeating: 3, count: 8000 * 5))
        #expect(v == .human && at == 3500)
    }

    @Test("a held pure tone is a beep at any usual frequency; after the minimum length, once", arguments: [440.0, 1000, 1400, 2200])
    func beep(frequency: Double) {
        var detector = BeepDetector()
        let frames = Signals.sineFrames(frequency, rate: .hz8000, frames: 20)
        var hits: [Int] = []
        for (i, frame) in frames.enumerated() where frame.withSamples({ detector.feed($0, rate: 8000) }) { hits.append(i) }
        #expect(hits == [7], "\(hits)")
    }

    @Test("speech, noise, DTMF, a quiet tone and a short blip are not beeps")
    func notBeeps() {
        func beeps(_ samples: [Int16]) -> Bool {
            var d = BeepDetector()
            return stride(from: 0, to: samples.count - 159, by: 160).contains { s in samples[s..<s + 160].withUnsafeBufferPointer { d.feed($0, rate: 8000) } }
        }
        #expect(!beeps(Self.talk(ms: 4000, total: 4000)))
        #expect(!beeps((0..<32000).map { _ in Int16.random(in: -8000...8000) }))
        let dtmf = zip(Signals.sine(770, rate: 8000, count: 8000), Signals.sine(1336, rate: 8000, count: 8000)).map { $0 &+ $1 }
        #expect(!beeps(dtmf))
        #expect(!beeps(Signals.sine(1000, rate: 8000, count: 8000, amplitude: 300)))
        #expect(!beeps(Signals.sine(1000, rate: 8000, count: 800) + [Int16](repeating: 0, count: 8000)))
    }
}
