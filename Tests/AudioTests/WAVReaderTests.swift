import Testing
@testable import Audio

@Suite("WAV reader")
struct WAVReaderTests {
    static func decode(_ bytes: [UInt8], pieces: Int = 1) throws(WAVError) -> (WAVFormat?, [Int16]) {
        var reader = WAVReader()
        var out: [Int16] = []
        let size = max(1, (bytes.count + pieces - 1) / pieces)
        var i = 0
        while i < bytes.count {
            let end = min(bytes.count, i + size)
            try bytes.withUnsafeBufferPointer { (b) throws(WAVError) in
                try reader.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[i..<end]))) { out += $0 }
            }
            i = end
        }
        try reader.finish { out += $0 }
        return (reader.format, out)
    }

    static func file(_ format: WAVFormat, data: [UInt8], extraChunk: Bool = false) -> [UInt8] {
        var header = format.header(dataLength: data.count)
        if extraChunk {
            // A LIST chunk of odd length (with its pad byte) between fmt and data.
            let list: [UInt8] = Array("LIST".utf8) + [5, 0, 0, 0] + Array("INFOx".utf8) + [0]
            header.insert(contentsOf: list, at: 36)
        }
        return header + data
    }

    @Test("16-bit mono decodes the same fed whole, byte by byte, or in odd pieces", arguments: [1, 7, 1000])
    func pieces(pieces: Int) throws {
        let samples: [Int16] = [0, 1, -1, 32767, -32768, 1234, -4321]
        let data = samples.flatMap { [UInt8(UInt16(bitPattern: $0) & 0xFF), UInt8(UInt16(bitPattern: $0) >> 8)] }
        let bytes = Self.file(WAVFormat(sampleRate: 44_100), data: data, extraChunk: true)
        let (format, out) = try Self.decode(bytes, pieces: min(pieces, bytes.count))
        #expect(out == samples)
        #expect(format == WAVFormat(sampleRate: 44_100, channels: 1, bitsPerSample: 16, dataLength: 14))
    }

    @Test("8-bit unsigned and stereo (mixed down) decode")
    func eightBitAndStereo() throws {
        let (_, eight) = try Self.decode(Self.file(WAVFormat(sampleRate: 8000, bitsPerSample: 8), data: [128, 255, 0, 129]))
        #expect(eight == [0, 127 << 8, -32768, 256])
        let stereo: [UInt8] = [0x10, 0x00, 0x30, 0x00, 0xFF, 0xFF, 0xFD, 0xFF]  // (16, 48), (-1, -3)
        let (f, mixed) = try Self.decode(Self.file(WAVFormat(sampleRate: 22_050, channels: 2), data: stereo))
        #expect(mixed == [32, -2] && f?.channels == 2)
    }

    @Test("bad bytes are typed errors", arguments: [
        (Array("RIFX0000WAVE".utf8), WAVError.notRIFF),
        (Array("RIFF0000AVI ".utf8), WAVError.notWAVE),
        (Array("RIFF0000WA".utf8), WAVError.truncated(needed: 12, available: 10)),
        (Array("RIFF0000WAVEdata".utf8) + [4, 0, 0, 0, 1, 2, 3, 4], WAVError.missingFormat),
        (Array(WAVFormat(sampleRate: 8000).header(dataLength: 100).prefix(44)) + [1, 2], WAVError.truncated(needed: 98, available: 0)),
        ({ var h = WAVFormat(sampleRate: 8000).header(dataLength: 0); h[20] = 3; return h }(), WAVError.unsupportedEncoding(formatTag: 3)),
        ({ var h = WAVFormat(sampleRate: 8000).header(dataLength: 0); h[34] = 24; return h }(), WAVError.unsupportedBitsPerSample(24)),
        ({ var h = WAVFormat(sampleRate: 8000).header(dataLength: 0); h[22] = 0; return h }(), WAVError.badFormat("0 channels")),
        ({ var h = WAVFormat(sampleRate: 8000).header(dataLength: 0); h[16] = 0xFF; h[17] = 0xFF; return h }(), WAVError.badFormat("fmt chunk of 65535 bytes")),
        (Array("RIFF0000WAVEjunk".utf8) + [0xFF, 0xFF, 0xFF, 0x7F], WAVError.truncated(needed: 8, available: 0)),
    ] as [([UInt8], WAVError)])
    func errors(bytes: [UInt8], error: WAVError) {
        #expect(throws: error) { try Self.decode(bytes) }
    }

    @Test("a huge skipped chunk costs no memory: a 2 GiB LIST declared, 1 MiB fed")
    func boundedSkip() throws {
        var reader = WAVReader()
        let head: [UInt8] = Array(WAVFormat(sampleRate: 8000).header(dataLength: 0).prefix(36)) + Array("LIST".utf8) + [0, 0, 0, 0x80]
        try head.withUnsafeBufferPointer { (b) throws(WAVError) in try reader.feed(UnsafeRawBufferPointer(b)) { _ in } }
        let junk = [UInt8](repeating: 0x41, count: 1 << 20)
        var emitted = 0
        try junk.withUnsafeBufferPointer { (b) throws(WAVError) in try reader.feed(UnsafeRawBufferPointer(b)) { emitted += $0.count } }
        #expect(emitted == 0 && reader.format?.sampleRate == 8000)
    }
}
