// Audio benchmarks: cost per 20 ms tick of the pure pieces the media worker drives, and the
// text-to-speech and speech recognition real-time factors. Run release builds only (scripts/bench-audio).
// Mixer ticks include copying every participant's decoded frame in (setInput) and measuring
// every input's level, which is what dominates per-participant cost in large rooms.
import Audio
import Foundation

func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }

func measure(_ iterations: Int, _ body: () throws -> Void) rethrows -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<iterations { try body() }
    return seconds(clock.now - start) / Double(iterations)
}

func sineFrame(_ f: Double, rate: SampleRate, amplitude: Double = 8000) -> AudioFrame {
    let n = rate.samplesPerFrame
    return try! AudioFrame(rate: rate, samples: (0..<n).map { Int16(amplitude * sin(2 * .pi * f * Double($0) / Double(rate.rawValue))) })
}

func row(_ name: String, _ value: String, _ unit: String) {
    print("| " + name.padding(toLength: 52, withPad: " ", startingAt: 0) + " | " + value.leftPad(10) + " | " + unit.padding(toLength: 9, withPad: " ", startingAt: 0) + " |")
}

func section(_ title: String) {
    print("\n" + title + "\n")
    print("| measurement" + String(repeating: " ", count: 42) + "|      value | unit      |")
    print("|" + String(repeating: "-", count: 54) + "|-----------:|-----------|")
}

extension String {
    func leftPad(_ n: Int) -> String { count >= n ? self : String(repeating: " ", count: n - count) + self }
}

section("mixer core (5 loudest mixed, every participant sends audio)")
for rate in [SampleRate.hz16000, .hz48000] {
    for participants in [10, 100, 1000] {
        let core = MixerCore(capacity: participants, rate: rate)
        let frames = (0..<participants).map { sineFrame(200 + Double($0 % 50) * 10, rate: rate, amplitude: 1000 + Double($0 % 7) * 1000) }
        for i in 0..<participants { core.join(MixerSlot(i)) }
        let ticks = max(50, 200_000 / participants)
        let t = measure(ticks) {
            for i in 0..<participants { core.setInput(MixerSlot(i), frames[i]) }
            core.mix()
        }
        row("mixer \(rate.rawValue / 1000) kHz, \(participants) participants: per tick", String(format: "%.1f", t * 1e6), "µs")
        row("mixer \(rate.rawValue / 1000) kHz, \(participants) participants: per participant", String(format: "%.0f", t * 1e9 / Double(participants)), "ns")
    }
}

section("jitter buffer (insert + pop, in order)")
do {
    var jb = JitterBuffer()
    let payload = [UInt8](repeating: 1, count: 80)
    var seq: UInt16 = 0
    var now: UInt64 = 1_000_000_000
    let t = measure(1_000_000) {
        _ = payload.withUnsafeBytes { jb.insert(sequence: seq, timestamp: UInt32(seq) &* 960, payload: $0, arrival: now) }
        _ = jb.pop(now: now)
        seq &+= 1
        now += 20_000_000
    }
    row("jitter buffer insert + pop", String(format: "%.0f", t * 1e9), "ns/packet")
}

section("codecs and DSP (per 20 ms frame)")
do {
    var buffer = [UInt8](repeating: 0, count: 1500)
    for rate in [SampleRate.hz16000, .hz48000] {
        var c = OpusCodec.Configuration(); c.sampleRate = rate
        let opus = try OpusCodec(c)
        let frame = sineFrame(440, rate: rate)
        var out = AudioFrame(rate: rate)
        var n = 0
        let enc = try measure(2000) { n = try buffer.withUnsafeMutableBytes { try opus.encode(frame, into: $0) } }
        let dec = try measure(2000) { try buffer.withUnsafeBytes { try opus.decode(UnsafeRawBufferPointer(rebasing: $0[0..<n]), into: &out) } }
        row("Opus encode \(rate.rawValue / 1000) kHz", String(format: "%.1f", enc * 1e6), "µs")
        row("Opus decode \(rate.rawValue / 1000) kHz", String(format: "%.1f", dec * 1e6), "µs")
    }
    let g711 = G711Codec(.muLaw)
    let narrow = sineFrame(440, rate: .hz8000)
    var out8 = AudioFrame(rate: .hz8000)
    let genc = try measure(100_000) { _ = try buffer.withUnsafeMutableBytes { try g711.encode(narrow, into: $0) } }
    let gdec = try measure(100_000) { try buffer.withUnsafeBytes { try g711.decode(UnsafeRawBufferPointer(rebasing: $0[0..<160]), into: &out8) } }
    row("G.711 µ-law encode", String(format: "%.2f", genc * 1e6), "µs")
    row("G.711 µ-law decode", String(format: "%.2f", gdec * 1e6), "µs")
    // A phone line in a mix resamples both ways every tick: the dedicated ratio-6 filter beside speexdsp
    // (quality 5, the general resampler used for it before), same process, same frames.
    let wide = sineFrame(440, rate: .hz48000)
    var out48 = AudioFrame(rate: .hz48000)
    for (name, general) in [("polyphase FIR", false), ("speexdsp q5", true)] {
        let down = try Resampler(from: .hz48000, to: .hz8000, general: general)
        let up = try Resampler(from: .hz8000, to: .hz48000, general: general)
        let d = try measure(20_000) { try down.process(wide, into: &out8) }
        let u = try measure(20_000) { try up.process(narrow, into: &out48) }
        row("resample 48 → 8 kHz, \(name)", String(format: "%.2f", d * 1e6), "µs")
        row("resample 8 → 48 kHz, \(name)", String(format: "%.2f", u * 1e6), "µs")
    }
    var detector = DTMFDetector(rate: .hz8000)
    let dt = measure(100_000) { _ = detector.process(narrow) }
    row("DTMF detector 8 kHz", String(format: "%.2f", dt * 1e6), "µs")
}

// A mixed room's fixed work per tick, whatever its listeners: decode each of 3 speakers (Opus as a
// browser sends it, ~68 bytes), mix, encode the shared mix once. Back to back, the codec's state and
// the CPU stay warm; paced one tick per 20 ms, as the media worker runs it with nothing else to do
// between ticks, the same work costs what the running server pays (docs/benchmarks.md, mixer 22.).
section("a mixed room's codec work per tick (3 decodes, mix, 1 encode), thread CPU")
do {
    func threadCPU() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
    let speakerCodec = try OpusCodec()
    var buffer = [UInt8](repeating: 0, count: OpusCodec.maxPayload)
    let packets: [[UInt8]] = try (0..<50).map { k in
        let n = try buffer.withUnsafeMutableBytes { try speakerCodec.encode(sineFrame(400, rate: .hz48000, amplitude: k < 5 ? 16_384 : 328), into: $0) }
        return Array(buffer[0..<n])
    }
    // Rooms on one worker tick together: the second room's codec work follows the first's.
    let rooms = 4
    let decoders = try (0..<3 * rooms).map { _ in try OpusCodec() }
    let mixEncoders = try (0..<rooms).map { _ in try OpusCodec() }
    let cores = (0..<rooms).map { _ in MixerCore(capacity: 4, rate: .hz48000) }
    for core in cores { for i in 0..<4 { core.join(MixerSlot(i)) } }
    var decoded = AudioFrame(rate: .hz48000)
    for (name, paced, active) in [("back to back", false, 1), ("one tick per 20 ms", true, 1), ("one tick per 20 ms, 4 rooms", true, rooms)] {
        let ticks = paced ? 250 : 2_000
        var decode = 0.0, encode = 0.0
        for tick in 0..<ticks {
            if paced { usleep(20_000) }
            for room in 0..<active {
                let t0 = threadCPU()
                for i in 0..<3 {
                    try packets[(tick + 17 * i) % packets.count].withUnsafeBytes { try decoders[3 * room + i].decode($0, into: &decoded) }
                    cores[room].setInput(MixerSlot(i), decoded)
                }
                cores[room].mix()
                let t1 = threadCPU()
                _ = try buffer.withUnsafeMutableBytes { try mixEncoders[room].encode(cores[room].shared, into: $0) }
                decode += t1 - t0
                encode += threadCPU() - t1
            }
        }
        let perRoom = Double(ticks * active)
        row("\(name): 3 decodes + mix", String(format: "%.0f", decode / perRoom * 1e6), "µs/tick")
        row("\(name): encode the shared mix", String(format: "%.0f", encode / perRoom * 1e6), "µs/tick")
        row("\(name): cores per room", String(format: "%.4f", (decode + encode) / perRoom / 0.020), "cores")
    }
}

section("text to speech (espeak-ng, one request at a time)")
let paragraph = "Thank you for calling. Your call is important to us. Please hold while we connect you to the next available representative. You are number three in the queue."
for language in ["en-US", "de-DE", "es-ES"] {
    let plan = try SpeechSynthesizer.plan(SpeechRequest(text: paragraph, language: language))
    let clock = ContinuousClock()
    let start = clock.now
    var samples = 0
    for segment in plan.segments { samples += try SpeechSynthesizer.render(segment, voice: plan.voice, rate: .hz16000).count }
    let compute = seconds(clock.now - start)
    let audio = Double(samples) / 16_000
    row("TTS \(language): \(String(format: "%.1f", audio)) s of audio in", String(format: "%.3f", compute), "s")
    row("TTS \(language): real-time factor", String(format: "%.4f", compute / audio), "×")
}

section("speech recognition (pocketsphinx, 8 kHz speech, a decoder made per utterance, mean of 3)")
let recognizer = SpeechRecognizer()
let spoken = try await SpeechSynthesizer().synthesize(SpeechRequest(text: "I would like to speak to an agent about my bill", language: "en-US", style: 1),
                                                      rate: .hz8000).flatMap(\.samples)
let spokenSeconds = Double(spoken.count) / 8000
for (name, context) in [("menu grammar", ["sales", "support", "billing", "speak to an agent"]), ("general language model", [])] {
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<3 { _ = try await recognizer.recognize(spoken, rate: 8000, context: context) }
    let compute = seconds(clock.now - start) / 3
    row("ASR \(name): \(String(format: "%.1f", spokenSeconds)) s of audio in", String(format: "%.3f", compute), "s")
    row("ASR \(name): real-time factor", String(format: "%.4f", compute / spokenSeconds), "×")
}
