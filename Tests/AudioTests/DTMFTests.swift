import Foundation
import Testing
@testable import Audio

@Suite("DTMF and tones")
struct DTMFTests {
    @Test("RFC 4733 payloads encode and decode", arguments: [
        (TelephoneEvent(digit: .d1, end: false, volume: 10, duration: 160), [0x01, 0x0A, 0x00, 0xA0]),
        (TelephoneEvent(digit: .pound, end: true, volume: 63, duration: 0xFFFF), [0x0B, 0xBF, 0xFF, 0xFF]),
        (TelephoneEvent(digit: .star, end: true, volume: 0, duration: 800), [0x0A, 0x80, 0x03, 0x20]),
        (TelephoneEvent(event: 16, end: false, volume: 5, duration: 1), [0x10, 0x05, 0x00, 0x01]),
    ] as [(TelephoneEvent, [UInt8])])
    func payloads(event: TelephoneEvent, bytes: [UInt8]) throws {
        #expect(event.serialized() == bytes)
        #expect(try TelephoneEvent.parse(bytes) == event)
    }

    @Test("the reserved bit is ignored; short and long payloads are typed errors")
    func payloadErrors() throws {
        #expect(try TelephoneEvent.parse([0x05, 0xCA, 0x00, 0x50]) == TelephoneEvent(digit: .d5, end: true, volume: 10, duration: 80))
        #expect(throws: TelephoneEvent.ParseError.truncated(needed: 4, available: 3)) { try TelephoneEvent.parse([1, 2, 3]) }
        #expect(throws: TelephoneEvent.ParseError.trailingBytes(1)) { try TelephoneEvent.parse([1, 2, 3, 4, 5]) }
    }

    @Test("a 100 ms press at 8 kHz: marker first, growing durations, end sent three times")
    func sender() {
        var sender = TelephoneEventSender(clockRate: 8000)
        sender.start(.d7, milliseconds: 100)
        var packets: [TelephoneEventSender.Packet] = []
        while let p = sender.next() { packets.append(p) }
        #expect(packets.map(\.event.duration) == [160, 320, 480, 640, 800, 800, 800])
        #expect(packets.map(\.event.end) == [false, false, false, false, true, true, true])
        #expect(packets.map(\.marker) == [true, false, false, false, false, false, false])
        #expect(packets.allSatisfy { $0.event.digit == .d7 })
        #expect(!sender.isActive)
    }

    @Test("the receiver reports each press once, across updates and end retransmissions", arguments: [
        // (timestamp, digit, end, duration) in arrival order → expected events
        ([(1000, 1, false, 160), (1000, 1, false, 320), (1000, 1, true, 480), (1000, 1, true, 480), (1000, 1, true, 480)],
         ["+1", "-1:480"]),
        // first packet lost: the press still starts on the next one
        ([(1000, 2, false, 320), (1000, 2, true, 480), (1000, 2, true, 480)], ["+2", "-2:480"]),
        // same key twice: told apart by timestamp
        ([(1000, 3, true, 480), (1000, 3, true, 480), (2000, 3, false, 160), (2000, 3, true, 480), (2000, 3, true, 480)],
         ["+3", "-3:480", "+3", "-3:480"]),
        // every end packet lost, then the next key
        ([(1000, 4, false, 160), (1000, 4, false, 320), (3000, 5, false, 160), (3000, 5, true, 320)], ["+4", "+5", "-5:320"]),
        // late update after the end is ignored; non-DTMF events (16 = flash) ignored
        ([(1000, 6, true, 480), (1000, 6, false, 320), (4000, 16, false, 160)], ["+6", "-6:480"]),
        // timestamp wrap
        ([(0xFFFF_FF00, 9, true, 160), (0x0000_0100, 0, true, 160)], ["+9", "-9:160", "+0", "-0:160"]),
    ] as [([(UInt32, UInt8, Bool, UInt16)], [String])])
    func receiver(packets: [(UInt32, UInt8, Bool, UInt16)], expected: [String]) {
        var r = TelephoneEventReceiver()
        var out: [String] = []
        for (ts, ev, end, duration) in packets {
            for e in r.receive(timestamp: ts, TelephoneEvent(event: ev, end: end, duration: duration)) {
                switch e {
                case let .began(d): out.append("+\(d.character)")
                case let .ended(d, dur): out.append("-\(d.character):\(dur)")
                }
            }
        }
        #expect(out == expected)
    }

    @Test("in-band: all 16 keys generated are detected once each, in order", arguments: SampleRate.allCases)
    func inBand(rate: SampleRate) {
        var gen = DTMFGenerator(rate: rate, toneMilliseconds: 80, gapMilliseconds: 60)
        let keys = "123A456B789C*0#D"
        gen.enqueue(keys)
        var det = DTMFDetector(rate: rate)
        var frame = AudioFrame(rate: rate)
        var found = ""
        for _ in 0..<200 {
            gen.fill(&frame)
            if let d = det.process(frame) { found.append(d.character) }
        }
        #expect(found == keys)
    }

    @Test("in-band detection survives noise and −20 dBFS level; repeated keys need a gap")
    func inBandNoisy() {
        var gen = DTMFGenerator(rate: .hz8000, toneMilliseconds: 60, gapMilliseconds: 60, level: -23)
        gen.enqueue("5500")
        var det = DTMFDetector(rate: .hz8000)
        var frame = AudioFrame(rate: .hz8000)
        var random = Signals.Random(state: 7)
        var found = ""
        for _ in 0..<50 {
            gen.fill(&frame)
            frame.withMutableSamples { s in for i in 0..<s.count { s[i] = s[i] &+ Int16(random.unit() * 150) } }
            if let d = det.process(frame) { found.append(d.character) }
        }
        #expect(found == "5500")
    }

    @Test("speech-like sound and noise are not keys")
    func rejectsSpeech() {
        var det = DTMFDetector(rate: .hz8000)
        var random = Signals.Random(state: 99)
        var phase = 0.0
        var detections = 0
        var frame = AudioFrame(rate: .hz8000)
        // 10 s of a voiced, gliding harmonic series (f0 100–220 Hz, harmonics falling 6 dB/octave,
        // which crosses both DTMF groups) with breath noise, then loud white noise.
        for t in 0..<500 {
            let f0 = 100 + 120 * (0.5 + 0.5 * sin(Double(t) / 37))
            frame.withMutableSamples { s in
                for i in 0..<s.count {
                    phase += 2 * Double.pi * f0 / 8000
                    var v = 0.0
                    for h in 1...30 { v += sin(phase * Double(h)) / Double(h) }
                    let noise = random.unit()
                    s[i] = Int16(clamping: Int(t < 400 ? v * 6000 + noise * 300 : noise * 12_000))
                }
            }
            if det.process(frame) != nil { detections += 1 }
        }
        #expect(detections == 0)
    }

    @Test("ringback cadences per country", arguments: [
        ("US", [440.0, 480], 2000, 6000), ("GB", [400, 450], 400, 3000), ("DE", [425], 1000, 5000),
        ("FR", [440], 1500, 5000), ("JP", [384, 416], 1000, 3000),
    ])
    func ringback(country: String, frequencies: [Double], onMilliseconds: Int, cycle: Int) throws {
        let cadence = try #require(ToneCadence.ringback(country: country))
        #expect(cadence.cycleMilliseconds == cycle && cadence.repeats)
        var gen = ToneGenerator(cadence, rate: .hz8000)
        var frame = AudioFrame(rate: .hz8000)
        var all: [Int16] = []
        for _ in 0..<(2 * cycle / 20) { gen.fill(&frame); all += frame.samples }
        let on = Array(all[0..<(onMilliseconds * 8)])
        for f in frequencies { #expect(Signals.power(on, f, rate: 8000) > 1e-3, "\(country) \(f) Hz") }
        #expect(Signals.power(on, 1000, rate: 8000) < 1e-5)
        // Silent right after the first tone, and the cadence starts again one cycle later.
        #expect(all[(onMilliseconds * 8 + 8)..<(onMilliseconds * 8 + 160)].allSatisfy { $0 == 0 })
        #expect(Signals.rms(Array(all[(cycle * 8)..<(cycle * 8 + 800)])) > 1000)
        #expect(ToneCadence.ringback(country: "ZZ") == nil)
    }

    @Test("the beep is 250 ms of 1 kHz, then silence")
    func beep() {
        var gen = ToneGenerator(.beep, rate: .hz48000)
        var frame = AudioFrame(rate: .hz48000)
        var all: [Int16] = []
        for _ in 0..<20 { gen.fill(&frame); all += frame.samples }
        #expect(Signals.dominantFrequency(Array(all[0..<12_000]), rate: 48_000) == 1000)
        #expect(all[12_000...].allSatisfy { $0 == 0 })
        #expect(gen.isFinished)
    }
}
