import Testing
@testable import Audio

@Suite("Opus codec")
struct OpusCodecTests {
    @Test("a 440 Hz tone survives encode → decode at every rate", arguments: SampleRate.allCases)
    func roundTrip(rate: SampleRate) throws {
        let codec = try OpusCodec({ var c = OpusCodec.Configuration(); c.sampleRate = rate; return c }())
        var out = AudioFrame(rate: rate)
        var payload = [UInt8](repeating: 0, count: OpusCodec.maxPayload)
        var decoded: [Int16] = []
        for frame in Signals.sineFrames(440, rate: rate, frames: 25) {
            let n = try payload.withUnsafeMutableBytes { try codec.encode(frame, into: $0) }
            #expect(n > 0 && n < 400)
            try payload.withUnsafeBytes { try codec.decode(UnsafeRawBufferPointer(rebasing: $0[0..<n]), into: &out) }
            decoded += out.samples
        }
        let tail = Array(decoded.suffix(rate.rawValue / 5))
        #expect(abs(Signals.dominantFrequency(tail, rate: rate.rawValue, low: 200, high: 1000, step: 5) - 440) <= 5)
        #expect(Signals.rms(tail) > 5000)
    }

    @Test("a lost packet is rebuilt from the next packet's FEC closer than plain concealment")
    func fecBeatsPlc() throws {
        var config = OpusCodec.Configuration()
        config.sampleRate = .hz16000
        config.expectedLossPercent = 20
        // The same packets decoded twice: once rebuilding frame 30 from frame 31's FEC, once by PLC.
        let encoder = try OpusCodec(config)
        let frames = Signals.sineFrames(300, rate: .hz16000, frames: 40, amplitude: 8000)
            .enumerated().map { i, f in var f = f; f.scale(by: Float(1 + (i % 5)) / 5); return f }
        var packets: [[UInt8]] = []
        var buffer = [UInt8](repeating: 0, count: OpusCodec.maxPayload)
        for f in frames {
            let n = try buffer.withUnsafeMutableBytes { try encoder.encode(f, into: $0) }
            packets.append(Array(buffer[0..<n]))
        }
        func error(useFEC: Bool) throws -> Double {
            let decoder = try OpusCodec(config)
            var out = AudioFrame(rate: .hz16000)
            for i in 0..<30 { try packets[i].withUnsafeBytes { try decoder.decode($0, into: &out) } }
            if useFEC {
                try packets[31].withUnsafeBytes { try decoder.conceal(next: $0, into: &out) }
            } else {
                try decoder.conceal(next: nil, into: &out)
            }
            // Compare against a clean decode of frame 30.
            let clean = try OpusCodec(config)
            var reference = AudioFrame(rate: .hz16000)
            for i in 0...30 { try packets[i].withUnsafeBytes { try clean.decode($0, into: &reference) } }
            return Signals.rms(zip(out.samples, reference.samples).map { Int16(clamping: Int($0) - Int($1)) })
        }
        let withFEC = try error(useFEC: true)
        let withPLC = try error(useFEC: false)
        #expect(withFEC < withPLC, "FEC error \(withFEC), PLC error \(withPLC)")
    }

    @Test("garbage and oversized payloads are typed errors, not crashes")
    func badPayloads() throws {
        let codec = try OpusCodec()
        var out = AudioFrame(rate: .hz48000)
        #expect(throws: CodecError.self) { try [UInt8]().withUnsafeBytes { try codec.decode($0, into: &out) } }
        // TOC for a 60 ms frame (config 3, code 0) decodes to 2880 samples: more than one frame.
        #expect(throws: CodecError.wrongFrameLength(expected: 960, actual: 2880)) {
            try [UInt8]([0x18, 0, 0, 0]).withUnsafeBytes { try codec.decode($0, into: &out) }
        }
        // Code 3 packet claiming more frames than it has bytes for.
        #expect(throws: CodecError.self) { try [UInt8]([0x03, 0xFF]).withUnsafeBytes { try codec.decode($0, into: &out) } }
    }
}
