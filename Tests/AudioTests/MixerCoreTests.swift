import Testing
@testable import Audio

@Suite("Mixer core")
struct MixerCoreTests {
    static let a = MixerSlot(0), b = MixerSlot(1), c = MixerSlot(2)

    /// Runs `ticks` ticks with A at 440 Hz and B at 1000 Hz (C silent), returns each slot's output samples.
    static func run(_ core: MixerCore, ticks: Int = 10, feed: Set<MixerSlot> = [a, b]) -> [MixerSlot: [Int16]] {
        let toneA = Signals.sineFrames(440, rate: .hz16000, frames: ticks)
        let toneB = Signals.sineFrames(1000, rate: .hz16000, frames: ticks)
        var heard: [MixerSlot: [Int16]] = [a: [], b: [], c: []]
        for t in 0..<ticks {
            if feed.contains(a) { core.setInput(a, toneA[t]) }
            if feed.contains(b) { core.setInput(b, toneB[t]) }
            core.setInput(c, AudioFrame(rate: .hz16000))
            core.mix()
            for s in [a, b, c] { heard[s]! += core.frame(for: s).samples }
        }
        return heard
    }

    static func hasTone(_ samples: [Int16], _ f: Double) -> Bool { Signals.power(samples, f, rate: 16_000) > 1e-3 }

    @Test("two talkers: the third hears both, each hears only the other")
    func mixMinus() {
        let core = MixerCore(capacity: 8, rate: .hz16000)
        for s in [Self.a, Self.b, Self.c] { core.join(s) }
        let heard = Self.run(core)
        #expect(Self.hasTone(heard[Self.c]!, 440) && Self.hasTone(heard[Self.c]!, 1000))
        #expect(!Self.hasTone(heard[Self.a]!, 440) && Self.hasTone(heard[Self.a]!, 1000))
        #expect(Self.hasTone(heard[Self.b]!, 440) && !Self.hasTone(heard[Self.b]!, 1000))
        #expect(core.output(for: Self.c) == .shared && core.output(for: Self.a) == .own && core.output(for: Self.b) == .own)
        // Mix-minus is exact: A's mix is B's tone sample for sample.
        let toneB = Signals.sineFrames(1000, rate: .hz16000, frames: 10).flatMap(\.samples)
        #expect(heard[Self.a]! == toneB)
    }

    @Test("muted is heard by nobody; earmuffed hears nothing but is still heard")
    func muteAndEarmuff() {
        let core = MixerCore(capacity: 4, rate: .hz16000)
        core.join(Self.a, flags: MixerFlags(muted: true))
        core.join(Self.b, flags: MixerFlags(earmuffed: true))
        core.join(Self.c)
        let heard = Self.run(core)
        #expect(!Self.hasTone(heard[Self.c]!, 440) && Self.hasTone(heard[Self.c]!, 1000))
        #expect(Self.hasTone(heard[Self.a]!, 1000))
        #expect(heard[Self.b]!.allSatisfy { $0 == 0 } && core.output(for: Self.b) == .silence)
        #expect(core.mixedSlots == [Self.b])
    }

    @Test("canHear and canSpeak restrict who hears whom")
    func restrictions() {
        let core = MixerCore(capacity: 4, rate: .hz16000)
        core.join(Self.a, flags: MixerFlags(canSpeak: [Self.b]))  // only B hears A
        core.join(Self.b)
        core.join(Self.c, flags: MixerFlags(canHear: [Self.a, Self.b]))
        let heard = Self.run(core)
        #expect(!Self.hasTone(heard[Self.c]!, 440) && Self.hasTone(heard[Self.c]!, 1000))
        #expect(Self.hasTone(heard[Self.b]!, 440))
        let d = MixerSlot(3)
        core.join(d, flags: MixerFlags(canHear: []))
        _ = Self.run(core, ticks: 1)
        #expect(core.output(for: d) == .silence)
    }

    @Test("only the loudest N inputs are mixed")
    func loudestN() {
        let core = MixerCore(capacity: 10, rate: .hz16000, maxSpeakers: 3)
        for i in 0..<10 { core.join(MixerSlot(i)) }
        for i in 0..<10 {
            core.setInput(MixerSlot(i), Signals.sineFrames(300 + 100 * Double(i), rate: .hz16000, frames: 1, amplitude: 1000 * Double(i + 1))[0])
        }
        core.mix()
        #expect(core.mixedSlots == [MixerSlot(9), MixerSlot(8), MixerSlot(7)])
        #expect(core.output(for: MixerSlot(0)) == .shared && core.output(for: MixerSlot(9)) == .own)
    }

    @Test("full-scale inputs in phase never wrap: the limiter bends toward full scale")
    func limiter() {
        let core = MixerCore(capacity: 6, rate: .hz16000)
        let loud = Signals.sineFrames(200, rate: .hz16000, frames: 1, amplitude: 32767)[0]
        for i in 0..<6 { core.join(MixerSlot(i), flags: MixerFlags(volume: 4)) }
        for i in 0..<5 { core.setInput(MixerSlot(i), loud) }
        core.mix()
        let out = core.shared.samples
        // Same sign as the input wherever the input is not near zero (a wrap would flip it).
        for (x, y) in zip(loud.samples, out) where abs(Int(x)) > 100 { #expect((x > 0) == (y > 0)) }
        #expect(out.max()! > 32_000 && out.max()! < 32_767 && out.min()! > -32_767)
        for x: Int32 in [0, 1, -1, 24_576, 100_000, -100_000, .max, .min + 1] {
            let y = SoftLimiter.limit(x)
            #expect(abs(Int(y)) <= 32_766 && (x == 0 || (x > 0) == (y > 0)))
        }
        #expect(SoftLimiter.limit(20_000) == 20_000)
    }

    @Test("levels follow RFC 6464 and speaking has hysteresis")
    func levelsAndSpeaking() {
        let fullSine = Signals.sineFrames(1000, rate: .hz16000, frames: 1, amplitude: 32767)[0]
        #expect(AudioLevel.level(fullSine) == 3)
        #expect(AudioLevel.level(AudioFrame(rate: .hz16000)) == 127)
        let quiet = Signals.sineFrames(1000, rate: .hz16000, frames: 1, amplitude: 327.67)[0]
        #expect(AudioLevel.level(quiet) == 43)

        let core = MixerCore(capacity: 2, rate: .hz16000)
        core.join(Self.a)
        let talk = Signals.sineFrames(300, rate: .hz16000, frames: 100, amplitude: 5000)
        var states: [Bool] = []
        for t in 0..<100 {
            // 1 s of speech with a 100 ms pause in the middle, then 1 s of silence.
            if t < 50 && !(20..<25).contains(t) { core.setInput(Self.a, talk[t]) }
            core.mix()
            states.append(core.isSpeaking(Self.a))
        }
        #expect(states[0] == false && states[2] == true)       // on after 3 frames
        #expect(states[20..<50].allSatisfy { $0 })              // the pause does not turn it off
        #expect(states[60] == true && states[80] == false)      // off 500 ms after speech ends
    }
}
