import Audio
import Crypto
import Foundation
import Runtime
import Testing
@testable import Media

/// The worker's mixer tick in process: a real worker core (no thread, datagrams counted and
/// dropped), real Opus, inputs through the generic frame-queue input.
@Suite("Mixer tick")
struct MixerTests {
    let core: WorkerCore
    let router = RouterID(rawValue: "rt-mix")
    let mixerID = MixerID(rawValue: "mx-test")
    let keys = SRTPKeys(localKey: [UInt8](repeating: 1, count: 16), localSalt: [UInt8](repeating: 2, count: 14),
                        remoteKey: [UInt8](repeating: 1, count: 16), remoteSalt: [UInt8](repeating: 2, count: 14))

    init() throws {
        let socket = try UDPSocket(host: "127.0.0.1", port: 0)
        core = WorkerCore(index: 0, loop: EventLoop(index: 98), socket: socket, certificate: try DTLSCertificate(),
                          configuration: MediaConfiguration()) { _ in }
        core.queue.discard = true
        core.createRouter(router)
        try core.createMixer(mixerID, router: router, outputID: ProducerID(rawValue: "pr-mix"), capacity: 16, maxSpeakers: 5)
    }

    /// A connected listener transport consuming the mix; bound to `participant` when given.
    @discardableResult
    func listener(_ n: UInt16, as participant: String? = nil) throws -> ConsumerID {
        let transport = TransportID(rawValue: "tp-\(n)")
        _ = try core.createTransport(router: router, transportID: transport)
        try core.transports[transport]!.installForBenchmark(profile: .aes128CMSHA1_80, keys: keys,
                                                            address: PeerAddress(ipv4: 0x7F00_0001, port: 41_000 + n))
        let consumer = ConsumerID(rawValue: "cn-\(n)")
        _ = try core.consume(transport, consumerID: consumer, producer: ProducerID(rawValue: "pr-mix"))
        if let participant { try core.bindMixerOutput(mixerID, consumer: consumer, participant: MixerParticipantID(participant)) }
        return consumer
    }

    func tone(_ frequency: Double, frames: Int, amplitude: Double = 6000) -> [Int16] {
        (0..<frames * 960).map { Int16(amplitude * sin(2 * Double.pi * frequency * Double($0) / 48_000)) }
    }

    func speaker(_ id: String, _ frequency: Double, frames: Int = 20) throws {
        try core.addMixerParticipant(mixerID, participant: MixerParticipantID(id), source: .frames,
                                     options: MixerParticipantOptions(), queueFrames: 100)
        _ = try core.queueFrames(mixerID, participant: MixerParticipantID(id), samples: tone(frequency, frames: frames), end: false)
    }

    /// Power of `frequency` in a frame (one DFT bin), relative to the frame's total power.
    func share(of frequency: Double, in frame: AudioFrame) -> Double {
        frame.withSamples { s in
            var re = 0.0, im = 0.0, total = 0.0
            for i in 0..<s.count {
                let x = Double(s[i])
                re += x * cos(2 * Double.pi * frequency * Double(i) / Double(frame.rate.rawValue))
                im += x * sin(2 * Double.pi * frequency * Double(i) / Double(frame.rate.rawValue))
                total += x * x
            }
            return total == 0 ? 0 : (re * re + im * im) / (Double(s.count) / 2) / total
        }
    }

    /// Runs `ticks` ticks, decoding the shared packet after each; returns the last decoded frame.
    func run(_ ticks: Int, from start: UInt64 = 1_000_000_000) throws -> AudioFrame {
        let mixer = try core.mixer(mixerID)
        let decoder = try OpusCodec()
        var frame = AudioFrame(rate: .hz48000)
        for t in 0..<ticks {
            mixer.tick(now: start + UInt64(t) * 20_000_000, queue: core.queue)
            if mixer.sharedLength > Mixer.headerLength {
                try decoder.decode(UnsafeRawBufferPointer(start: mixer.sharedPacket + Mixer.headerLength,
                                                          count: mixer.sharedLength - Mixer.headerLength), into: &frame)
            }
        }
        return frame
    }

    @Test("two inputs become one shared mix, encoded once per tick however many listen; each speaker gets its own mix-minus")
    func sharedAndMixMinus() throws {
        try speaker("a", 440)
        try speaker("b", 880)
        for n: UInt16 in 1...6 { try listener(n) }
        try listener(7, as: "a")
        try listener(8, as: "b")
        let shared = try run(10)
        let stats = try core.mixerStats(mixerID)
        #expect(stats.ticksMixed == 10)
        #expect(stats.sharedEncodes == 10, "the shared mix is encoded once per tick, not per listener")
        #expect(stats.ownEncodes == 20, "one mix-minus per speaker per tick")
        #expect(stats.packetsSent == 80)
        #expect(share(of: 440, in: shared) > 0.2 && share(of: 880, in: shared) > 0.2, "both tones in the shared mix")
        let mixer = try core.mixer(mixerID)
        let a = try #require(mixer.participant(MixerParticipantID("a")))
        #expect(mixer.core.output(for: a.slot) == .own)
        let own = mixer.core.ownMix(for: a.slot)
        #expect(share(of: 880, in: own) > 0.8 && share(of: 440, in: own) < 0.01, "a hears b and not itself")
    }

    @Test("a mixer of more WebRTC inputs than it decodes: the loudest by their senders' levels are decoded and mixed, the rest consumed undecoded with their levels kept")
    func rankedBySenderLevels() throws {
        let mixer = try core.mixer(mixerID)
        // Ten microphones, each a tone of its own; the last one is the loudest by the level it stamps, the others tie.
        let frequencies: [Double] = [300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1500]
        let levels: [UInt8] = [30, 30, 30, 30, 30, 30, 30, 30, 30, 10]
        var inputs: [RTPMixerInput] = []
        for (i, _) in frequencies.enumerated() {
            let input = try RTPMixerInput(codec: try OpusCodec(), codecRate: .hz48000, mixerRate: .hz48000, clockRate: 48_000)
            try mixer.add(MixerParticipantID("m\(i)"), input: input, producer: nil, options: MixerParticipantOptions())
            inputs.append(input)
        }
        try listener(1)
        let encoders = try frequencies.map { _ in try OpusCodec() }
        let decoder = try OpusCodec()
        var frame = AudioFrame(rate: .hz48000), heard = AudioFrame(rate: .hz48000)
        var payload = [UInt8](repeating: 0, count: OpusCodec.maxPayload)
        let start: UInt64 = 1_000_000_000
        for t in 0..<40 {
            let now = start + UInt64(t) * 20_000_000
            for (i, input) in inputs.enumerated() {
                let samples = tone(frequencies[i], frames: 1, amplitude: levels[i] == 10 ? 8000 : 2000)
                samples.withUnsafeBufferPointer { frame.copy(from: $0) }
                let n = try payload.withUnsafeMutableBytes { try encoders[i].encode(frame, into: $0) }
                payload.withUnsafeBytes { input.receive($0.baseAddress!, length: n, sequence: UInt16(t), timestamp: UInt32(t * 960), level: levels[i], now: now) }
            }
            mixer.tick(now: now, queue: core.queue)
            if mixer.sharedLength > Mixer.headerLength {
                try decoder.decode(UnsafeRawBufferPointer(start: mixer.sharedPacket + Mixer.headerLength,
                                                          count: mixer.sharedLength - Mixer.headerLength), into: &heard)
            }
        }
        // Decoded: the loudest (the last) and, of the tie, the six joined first (5 mixed + 2 spare in all).
        for i in 0..<6 { #expect(inputs[i].framesSkipped == 0, "input \(i) is among the loudest and decoded") }
        for i in 6..<9 { #expect(inputs[i].framesSkipped > 20, "input \(i) ranks below the loudest: \(inputs[i].framesSkipped) skipped") }
        #expect(inputs[9].framesSkipped == 0)
        #expect(try core.mixerStats(mixerID).framesSkipped == inputs.reduce(0) { $0 + $1.framesSkipped })
        #expect(share(of: 1500, in: heard) > 0.3, "the loudest is in the mix")
        for f in [900.0, 1000, 1100] { #expect(share(of: f, in: heard) < 0.01, "an undecoded input is not mixed (\(f) Hz)") }
        let skippedSlot = try #require(mixer.participant(MixerParticipantID("m7"))).slot
        #expect(mixer.core.level(for: skippedSlot) == 30, "an undecoded input's level is its sender's")
        #expect(mixer.core.isSpeaking(skippedSlot), "and it speaks by that level")
        #expect(mixer.pacer === inputs[9], "the worker's tick follows the loudest speaker's arrivals")
        mixer.remove(MixerParticipantID("m9"))
        #expect(mixer.pacer == nil, "and stops when it leaves")
    }

    @Test("the tick follows a speaker while it speaks, and moves to another only when that one is clearly louder for a few ticks")
    func pacerFollowsTheDominantSpeaker() throws {
        let mixer = try core.mixer(mixerID)
        let inputs = try (0..<2).map { i in
            let input = try RTPMixerInput(codec: try OpusCodec(), codecRate: .hz48000, mixerRate: .hz48000, clockRate: 48_000)
            try mixer.add(MixerParticipantID("p\(i)"), input: input, producer: nil, options: MixerParticipantOptions())
            return input
        }
        try listener(1)
        let encoders = try inputs.map { _ in try OpusCodec() }
        var frame = AudioFrame(rate: .hz48000)
        var payload = [UInt8](repeating: 0, count: OpusCodec.maxPayload)
        var t = 0
        /// `ticks` ticks with each input's tone at its amplitude (0: it sends nothing).
        func speak(_ amplitudes: [Double], ticks: Int) throws {
            for _ in 0..<ticks {
                let now = 1_000_000_000 + UInt64(t) * 20_000_000
                for (i, input) in inputs.enumerated() where amplitudes[i] > 0 {
                    let samples = tone([440.0, 660][i], frames: 1, amplitude: amplitudes[i])
                    samples.withUnsafeBufferPointer { frame.copy(from: $0) }
                    let level = AudioLevel.level(frame)
                    let n = try payload.withUnsafeMutableBytes { try encoders[i].encode(frame, into: $0) }
                    payload.withUnsafeBytes { input.receive($0.baseAddress!, length: n, sequence: UInt16(t), timestamp: UInt32(t * 960), level: level, now: now) }
                }
                mixer.tick(now: now, queue: core.queue)
                t += 1
            }
        }
        try speak([2000, 0], ticks: 8)
        #expect(mixer.pacer === inputs[0], "the one speaker is followed")
        try speak([2000, 2500], ticks: 20)
        #expect(mixer.pacer === inputs[0], "another about as loud (2 dB more) does not take the tick")
        try speak([2000, 16_000], ticks: 1)
        #expect(mixer.pacer === inputs[0], "nor does one loud frame")
        try speak([2000, 16_000], ticks: 5)
        #expect(mixer.pacer === inputs[1], "a voice 18 dB louder for a few ticks does")
        try speak([2000, 2500], ticks: 20)
        #expect(mixer.pacer === inputs[1], "and keeps it when the two are alike again")
        try speak([2000, 0], ticks: 40)
        #expect(mixer.pacer === inputs[0], "until it stops speaking")
    }

    /// A port whose far end (at `rate`) says a tone for `frames` ticks, at whatever rate the mixer asks,
    /// and that keeps what it is given to hear (used on this test's thread only).
    final class RecordingPort: MixerPort, @unchecked Sendable {
        var rate: SampleRate
        let frequency: Double
        var frames: Int
        var phase = 0.0
        var heard: [AudioFrame?] = []
        var closed = false
        init(frequency: Double, frames: Int, rate: SampleRate = .hz48000) {
            self.frequency = frequency
            self.frames = frames
            self.rate = rate
        }
        func pull(into frame: inout AudioFrame, now: UInt64) -> Bool {
            guard frames > 0 else { return false }
            frames -= 1
            let step = 2 * Double.pi * frequency / Double(frame.rate.rawValue)
            frame.withMutableSamples { d in
                for i in 0..<d.count {
                    d[i] = Int16(6000 * sin(phase))
                    phase += step
                }
            }
            return true
        }
        func deliver(_ heard: AudioFrame?, now: UInt64) { self.heard.append(heard) }
        func close() { closed = true }
    }

    @Test("ports (phone lines): each hears the other every tick and not itself; a silent tick delivers nil; leaving closes the port")
    func ports() throws {
        let a = RecordingPort(frequency: 440, frames: 10)
        let b = RecordingPort(frequency: 880, frames: 10)
        try core.addMixerPort(mixerID, participant: MixerParticipantID("a"), options: MixerParticipantOptions()) { _ in a }
        try core.addMixerPort(mixerID, participant: MixerParticipantID("b"), options: MixerParticipantOptions()) { _ in b }
        _ = try run(14)
        #expect(a.heard.count == 14 && b.heard.count == 14, "one delivery per tick, silent or not")
        #expect(try core.mixerStats(mixerID).sharedEncodes == 0, "nobody listens to the shared mix: it is not encoded")
        let aHeard = try #require(a.heard[5])
        let bHeard = try #require(b.heard[5])
        #expect(share(of: 880, in: aHeard) > 0.8 && share(of: 440, in: aHeard) < 0.01, "a hears b, not itself")
        #expect(share(of: 440, in: bHeard) > 0.8 && share(of: 880, in: bHeard) < 0.01, "b hears a, not itself")
        #expect(a.heard.last! == nil, "after both went quiet the tick delivers silence")
        try core.removeMixerParticipant(mixerID, participant: MixerParticipantID("a"))
        #expect(a.closed && !b.closed)
        core.closeMixer(mixerID)
        #expect(b.closed, "closing the mixer closes its ports")
    }

    @Test("G.711 ports alone mix at 8 kHz; a tap or a WebRTC listener widens the mixer to 48 kHz, and it narrows when they leave")
    func narrowband() throws {
        let a = RecordingPort(frequency: 440, frames: 100, rate: .hz8000)
        let b = RecordingPort(frequency: 880, frames: 100, rate: .hz8000)
        try core.addMixerPort(mixerID, participant: MixerParticipantID("a"), options: MixerParticipantOptions()) { _ in a }
        try core.addMixerPort(mixerID, participant: MixerParticipantID("b"), options: MixerParticipantOptions()) { _ in b }
        let mixer = try core.mixer(mixerID)
        #expect(mixer.rate == .hz8000 && mixer.core.rate == .hz8000)
        /// What `port` heard at the last tick, after `ticks` more.
        func heard(_ port: RecordingPort, after ticks: Int) throws -> AudioFrame {
            for _ in 0..<ticks { mixer.tick(now: 1_000_000_000, queue: core.queue) }
            return try #require(port.heard.last ?? nil)
        }
        var frame = try heard(a, after: 6)
        #expect(frame.rate == .hz8000 && frame.count == 160, "a port hears the mix at its own rate")
        #expect(share(of: 880, in: frame) > 0.8 && share(of: 440, in: frame) < 0.01, "a hears b, not itself")

        try core.addMixerTap(mixerID, tap: MixerTapID("rec"), participant: nil, split: false, frames: 50)
        #expect(mixer.rate == .hz48000, "a recording takes the mix at 48 kHz")
        frame = try heard(b, after: 3)
        #expect(frame.rate == .hz48000 && share(of: 440, in: frame) > 0.8 && share(of: 880, in: frame) < 0.01)
        #expect(try core.drainMixerTap(mixerID, tap: MixerTapID("rec")).samples.count == 3 * 960)
        try core.removeMixerTap(mixerID, tap: MixerTapID("rec"))
        #expect(mixer.rate == .hz8000)

        let consumer = try listener(1)
        #expect(mixer.rate == .hz48000, "a WebRTC listener hears Opus at 48 kHz")
        frame = try heard(a, after: 3)
        #expect(frame.rate == .hz48000 && share(of: 880, in: frame) > 0.8)
        #expect(try core.mixerStats(mixerID).sharedEncodes > 0)
        _ = core.closeConsumer(consumer)
        #expect(mixer.rate == .hz8000)

        b.rate = .hz48000  // b's far end changed codec (a re-INVITE to Opus): the next tick widens.
        frame = try heard(a, after: 3)
        #expect(frame.rate == .hz48000 && share(of: 880, in: frame) > 0.8)
        let stats = try core.mixerStats(mixerID)
        #expect(stats.sampleRate == 48_000 && stats.rateChanges == 6 && stats.encoders == 0, "ports have no Opus encoder")
    }

    @Test("an earmuffed speaker and a port that hears only some hold no encoder; lifting the earmuff makes one on the control path")
    func encodersOnlyForWhoCanHearAnOwnMix() throws {
        let earmuffed = MixerParticipantOptions(earmuffed: true)
        try core.addMixerParticipant(mixerID, participant: MixerParticipantID("s"), source: .frames, options: earmuffed, queueFrames: 10)
        let port = RecordingPort(frequency: 440, frames: 0)
        try core.addMixerPort(mixerID, participant: MixerParticipantID("c"),
                              options: MixerParticipantOptions(canHear: [MixerParticipantID("s")])) { _ in port }
        _ = try run(3)
        #expect(try core.mixerStats(mixerID).encoders == 0)
        try core.setMixerOptions(mixerID, participant: MixerParticipantID("s"), options: MixerParticipantOptions())
        let stats = try core.mixerStats(mixerID)
        #expect(stats.encoders == 1 && stats.encodersMadeOnTick == 0)
        core.closeMixer(mixerID)
    }

    @Test("a muted speaker is not heard; an earmuffed participant gets silence")
    func muteAndEarmuff() throws {
        try speaker("a", 440, frames: 30)
        try speaker("b", 880, frames: 30)
        try core.addMixerParticipant(mixerID, participant: MixerParticipantID("c"), source: .none,
                                     options: MixerParticipantOptions(earmuffed: true), queueFrames: 1)
        try listener(1)
        try listener(2, as: "c")
        try core.setMixerOptions(mixerID, participant: MixerParticipantID("a"), options: MixerParticipantOptions(muted: true))
        let shared = try run(10)
        #expect(share(of: 880, in: shared) > 0.5 && share(of: 440, in: shared) < 0.02, "only b is heard")
        let mixer = try core.mixer(mixerID)
        let c = try #require(mixer.participant(MixerParticipantID("c")))
        #expect(mixer.core.output(for: c.slot) == .silence)
        #expect(mixer.core.frame(for: c.slot).samples.allSatisfy { $0 == 0 })
    }

    @Test("with no input audio a tick mixes, encodes and sends nothing")
    func idleTickCostsNothing() throws {
        try core.addMixerParticipant(mixerID, participant: MixerParticipantID("a"), source: .frames,
                                     options: MixerParticipantOptions(), queueFrames: 10)
        for n: UInt16 in 1...5 { try listener(n) }
        _ = try run(50)
        let stats = try core.mixerStats(mixerID)
        #expect(stats.ticksIdle == 50 && stats.ticksMixed == 0)
        #expect(stats.sharedEncodes == 0 && stats.ownEncodes == 0 && stats.packetsSent == 0)
        #expect(core.queue.sent == 0)
    }

    @Test("a frame input that played to its end leaves the mixer; closing the router closes the mixer and its consumers")
    func finishedAndClosed() throws {
        try speaker("a", 440, frames: 3)
        _ = try core.queueFrames(mixerID, participant: MixerParticipantID("a"), samples: [], end: true)
        try listener(1)
        _ = try run(5)
        let events = core.mixerEvents()
        #expect(events.contains(.mixerInputFinished(mixerID, MixerParticipantID("a"))))
        #expect(try core.mixerStats(mixerID).participants == 0)
        let closed = core.closeRouter(router)
        #expect(closed.producers.contains(ProducerID(rawValue: "pr-mix")))
        #expect(closed.consumers.contains(ConsumerID(rawValue: "cn-1")))
        #expect(core.mixers.isEmpty && core.producers.isEmpty && core.consumers.isEmpty)
    }
}
