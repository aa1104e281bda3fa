import Testing
@testable import Audio

@Suite("G.711")
struct G711Tests {
    /// Decoder outputs at the ends of each segment, from ITU-T G.711 Table 2 (µ-law, 14-bit units)
    /// and Table 1 (A-law, 13-bit units), positive half.
    static let muLawSegmentEnds: [(code: UInt8, value: Int)] = [
        (0xFF, 0), (0xF0, 30), (0xEF, 33), (0xE0, 93), (0xDF, 99), (0xD0, 219), (0xCF, 231), (0xC0, 471),
        (0xBF, 495), (0xB0, 975), (0xAF, 1023), (0xA0, 1983), (0x9F, 2079), (0x90, 3999), (0x8F, 4191), (0x80, 8031),
    ]
    static let aLawSegmentEnds: [(code: UInt8, value: Int)] = [
        (0xD5, 1), (0xDA, 31), (0xC5, 33), (0xCA, 63), (0xF5, 66), (0xFA, 126), (0xE5, 132), (0xEA, 252),
        (0x95, 264), (0x9A, 504), (0x85, 528), (0x8A, 1008), (0xB5, 1056), (0xBA, 2016), (0xA5, 2112), (0xAA, 4032),
    ]

    @Test("µ-law decodes the ITU segment end values, negative codes mirror them")
    func muLawTable() {
        for (code, value) in Self.muLawSegmentEnds {
            #expect(Int(MuLaw.decode(code)) == value * 4, "code \(code)")
            #expect(Int(MuLaw.decode(code & 0x7F)) == -value * 4, "code \(code & 0x7F)")
        }
    }

    @Test("A-law decodes the ITU segment end values, negative codes mirror them")
    func aLawTable() {
        for (code, value) in Self.aLawSegmentEnds {
            #expect(Int(ALaw.decode(code)) == value * 8, "code \(code)")
            #expect(Int(ALaw.decode(code & 0x7F)) == -value * 8, "code \(code & 0x7F)")
        }
    }

    @Test("every code survives decode → encode (µ-law's negative zero becomes positive zero)")
    func codeRoundTrip() {
        for c in 0...255 {
            let code = UInt8(c)
            #expect(ALaw.encode(ALaw.decode(code)) == code)
            #expect(MuLaw.encode(MuLaw.decode(code)) == (code == 0x7F ? 0xFF : code))
        }
    }

    @Test("silence and full scale: µ-law 0 → 0xFF, A-law 0 → 0xD5, extremes saturate")
    func extremes() {
        #expect(MuLaw.encode(0) == 0xFF && ALaw.encode(0) == 0xD5)
        #expect(MuLaw.encode(.max) == 0x80 && MuLaw.encode(.min) == 0x00)
        #expect(ALaw.encode(.max) == 0xAA && ALaw.encode(.min) == 0x2A)
    }

    @Test("quantisation error stays within half a step of the segment", arguments: [G711Codec.Law.muLaw, .aLaw])
    func quantisationError(law: G711Codec.Law) {
        for s in stride(from: -32768, through: 32767, by: 7) {
            let x = Int16(s)
            let y = law == .muLaw ? MuLaw.decode(MuLaw.encode(x)) : ALaw.decode(ALaw.encode(x))
            let err = abs(Int(x) - Int(y))
            // Step size grows with magnitude: 1/16 of the magnitude bounds half a step above segment 0.
            #expect(err <= max(16, abs(Int(x)) / 16 + 8) || abs(Int(x)) > 32_000, "x=\(x) y=\(y)")
        }
    }

    @Test("a codec frame round trip keeps a 1 kHz tone", arguments: [G711Codec.Law.muLaw, .aLaw])
    func codecRoundTrip(law: G711Codec.Law) throws {
        let codec = G711Codec(law)
        let frame = Signals.sineFrames(1000, rate: .hz8000, frames: 1)[0]
        var payload = [UInt8](repeating: 0, count: 160)
        let n = try payload.withUnsafeMutableBytes { try codec.encode(frame, into: $0) }
        #expect(n == 160)
        var out = AudioFrame(rate: .hz8000)
        try payload.withUnsafeBytes { try codec.decode($0, into: &out) }
        #expect(Signals.dominantFrequency(out.samples, rate: 8000) == 1000)
        let snr = Signals.rms(frame.samples) / Signals.rms(zip(frame.samples, out.samples).map { Int16($0 - $1) })
        #expect(snr > 30)  // G.711 gives about 38 dB on a loud tone
    }

    @Test("wrong payload length and wrong rate are typed errors")
    func errors() {
        let codec = G711Codec(.muLaw)
        var out = AudioFrame(rate: .hz8000)
        #expect(throws: CodecError.wrongFrameLength(expected: 160, actual: 3)) {
            try [UInt8](repeating: 0, count: 3).withUnsafeBytes { try codec.decode($0, into: &out) }
        }
        var wide = AudioFrame(rate: .hz16000)
        #expect(throws: CodecError.rateMismatch(expected: .hz8000, actual: .hz16000)) {
            try [UInt8](repeating: 0, count: 160).withUnsafeBytes { try codec.decode($0, into: &wide) }
        }
    }

    @Test("concealment repeats the last frame quieter, then goes silent")
    func conceal() throws {
        let codec = G711Codec(.aLaw)
        let frame = Signals.sineFrames(500, rate: .hz8000, frames: 1)[0]
        var payload = [UInt8](repeating: 0, count: 160)
        _ = try payload.withUnsafeMutableBytes { try codec.encode(frame, into: $0) }
        var out = AudioFrame(rate: .hz8000)
        try payload.withUnsafeBytes { try codec.decode($0, into: &out) }
        let loud = Signals.rms(out.samples)
        try codec.conceal(next: nil, into: &out)
        let first = Signals.rms(out.samples)
        #expect(first > loud * 0.4 && first < loud * 0.6)
        for _ in 0..<3 { try codec.conceal(next: nil, into: &out) }
        #expect(Signals.rms(out.samples) == 0)
    }
}
