import Foundation
import Testing
@testable import Audio

@Suite("Resampler")
struct ResamplerTests {
    @Test("440 Hz survives 48k → 8k → 48k")
    func downUp() throws {
        let down = try Resampler(from: .hz48000, to: .hz8000)
        let up = try Resampler(from: .hz8000, to: .hz48000)
        var narrow = AudioFrame(rate: .hz8000)
        var wide = AudioFrame(rate: .hz48000)
        var narrowAll: [Int16] = [], wideAll: [Int16] = []
        for frame in Signals.sineFrames(440, rate: .hz48000, frames: 50) {
            try down.process(frame, into: &narrow)
            try up.process(narrow, into: &wide)
            narrowAll += narrow.samples
            wideAll += wide.samples
        }
        let tail8 = Array(narrowAll.suffix(8000 / 2))
        let tail48 = Array(wideAll.suffix(48_000 / 2))
        #expect(abs(Signals.dominantFrequency(tail8, rate: 8000, low: 100, high: 3900, step: 5) - 440) <= 5)
        #expect(abs(Signals.dominantFrequency(tail48, rate: 48_000, low: 100, high: 3900, step: 5) - 440) <= 5)
        // Amplitude kept (peak 10000 → RMS ≈ 7071) and nothing much elsewhere in the band.
        #expect(abs(Signals.rms(tail48) - 7071) < 700)
        let tone = Signals.power(tail48, 440, rate: 48_000)
        for other in [220.0, 880, 1320, 3000] { #expect(Signals.power(tail48, other, rate: 48_000) < tone / 1000) }
    }

    @Test("a 6 kHz tone is removed going down to 8 kHz (above its Nyquist)")
    func antiAlias() throws {
        let down = try Resampler(from: .hz48000, to: .hz8000)
        var narrow = AudioFrame(rate: .hz8000)
        var all: [Int16] = []
        for frame in Signals.sineFrames(6000, rate: .hz48000, frames: 20) {
            try down.process(frame, into: &narrow)
            all += narrow.samples
        }
        #expect(Signals.rms(Array(all.suffix(1600))) < 100)  // would alias to 2 kHz at full level
    }

    @Test("going down to 8 kHz, 3.4 kHz passes and 6 kHz is at least 40 dB down")
    func telephoneBand() throws {
        func level(_ frequency: Double) throws -> (rms: Double, tone: Double) {
            let down = try Resampler(from: .hz48000, to: .hz8000)
            var narrow = AudioFrame(rate: .hz8000)
            var all: [Int16] = []
            for frame in Signals.sineFrames(frequency, rate: .hz48000, frames: 25) {
                try down.process(frame, into: &narrow)
                all += narrow.samples
            }
            let tail = Array(all.suffix(1600))
            return (Signals.rms(tail), Signals.power(tail, frequency < 4000 ? frequency : 8000 - frequency, rate: 8000))
        }
        let inputRMS = 10_000 / 2.0.squareRoot()
        let pass = try level(3400)
        #expect(abs(pass.rms - inputRMS) < inputRMS * 0.12)  // within 1 dB
        let stop = try level(6000)
        #expect(20 * log10(stop.rms / inputRMS) <= -40)
        // Nothing of it folds back to 2 kHz either.
        #expect(stop.tone < pass.tone / 10_000)
        // And back up: a 3.4 kHz tone at 8 kHz comes out at 48 kHz with its level, images removed.
        let up = try Resampler(from: .hz8000, to: .hz48000)
        var wide = AudioFrame(rate: .hz48000)
        var all: [Int16] = []
        for frame in Signals.sineFrames(3400, rate: .hz8000, frames: 25) {
            try up.process(frame, into: &wide)
            all += wide.samples
        }
        let tail = Array(all.suffix(9600))
        #expect(abs(Signals.rms(tail) - inputRMS) < inputRMS * 0.12)
        #expect(Signals.power(tail, 4600, rate: 48_000) < Signals.power(tail, 3400, rate: 48_000) / 10_000)
    }

    @Test("rate mismatches are typed errors; same rate copies")
    func mismatch() throws {
        let r = try Resampler(from: .hz16000, to: .hz48000)
        var out = AudioFrame(rate: .hz48000)
        #expect(throws: CodecError.rateMismatch(expected: .hz16000, actual: .hz8000)) { try r.process(AudioFrame(rate: .hz8000), into: &out) }
        let same = try Resampler(from: .hz8000, to: .hz8000)
        var o8 = AudioFrame(rate: .hz8000)
        let f = Signals.sineFrames(100, rate: .hz8000, frames: 1)[0]
        try same.process(f, into: &o8)
        #expect(o8 == f)
    }
}
