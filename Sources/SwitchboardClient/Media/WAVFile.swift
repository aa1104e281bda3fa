/// 16-bit PCM WAV (RIFF `WAVE`, `fmt ` tag 1) read and written whole: what the file source plays
/// and the recorder writes. Pure: bytes in, samples out.
///
/// ```
/// "RIFF" size "WAVE"  "fmt " 16 tag=1 channels rate byteRate blockAlign bits=16  "data" size samples…
/// ```
public struct WAVFile: Sendable, Equatable {
    public enum ParseError: Error, Equatable, Sendable {
        case truncated(needed: Int, available: Int)
        case notRIFFWAVE
        case missingChunk(String)
        case unsupported(String)
    }

    public var sampleRate: Int
    public var channels: Int
    /// Interleaved samples.
    public var samples: [Int16]

    public init(sampleRate: Int, channels: Int = 1, samples: [Int16]) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.samples = samples
    }

    public init(_ bytes: [UInt8]) throws(ParseError) {
        guard bytes.count >= 12 else { throw .truncated(needed: 12, available: bytes.count) }
        guard bytes[0..<4].elementsEqual("RIFF".utf8), bytes[8..<12].elementsEqual("WAVE".utf8) else { throw .notRIFFWAVE }
        var offset = 12
        var format: (tag: Int, channels: Int, rate: Int, bits: Int)?
        var data: Range<Int>?
        while offset + 8 <= bytes.count {
            let id = String(decoding: bytes[offset..<offset + 4], as: UTF8.self)
            let size = Int(Self.u32(bytes, offset + 4))
            let body = offset + 8
            let end = body + size
            if id == "fmt " {
                guard size >= 16, end <= bytes.count else { throw .truncated(needed: body + 16, available: bytes.count) }
                format = (Int(Self.u16(bytes, body)), Int(Self.u16(bytes, body + 2)), Int(Self.u32(bytes, body + 4)), Int(Self.u16(bytes, body + 14)))
            } else if id == "data" {
                data = body..<min(end, bytes.count)
                break
            }
            offset = end + (size & 1)
        }
        guard let format else { throw .missingChunk("fmt ") }
        guard let data else { throw .missingChunk("data") }
        guard format.tag == 1 || format.tag == 0xFFFE, format.bits == 16 else { throw .unsupported("format \(format.tag), \(format.bits) bits (16-bit PCM only)") }
        guard (1...8).contains(format.channels), (8000...192_000).contains(format.rate) else {
            throw .unsupported("\(format.channels) channels at \(format.rate) Hz")
        }
        sampleRate = format.rate
        channels = format.channels
        var samples = [Int16]()
        samples.reserveCapacity(data.count / 2)
        var i = data.lowerBound
        while i + 1 < data.upperBound {
            samples.append(Int16(bitPattern: UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8))
            i += 2
        }
        self.samples = samples
    }

    /// The file's bytes.
    public func serialize() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(44 + samples.count * 2)
        func put32(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24 & 0xFF)] }
        func put16(_ v: Int) { out += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        out += Array("RIFF".utf8)
        put32(36 + samples.count * 2)
        out += Array("WAVEfmt ".utf8)
        put32(16)
        put16(1)
        put16(channels)
        put32(sampleRate)
        put32(sampleRate * channels * 2)
        put16(channels * 2)
        put16(16)
        out += Array("data".utf8)
        put32(samples.count * 2)
        for s in samples { put16(Int(UInt16(bitPattern: s))) }
        return out
    }

    /// The first channel only.
    public var mono: [Int16] {
        channels == 1 ? samples : stride(from: 0, to: samples.count, by: channels).map { samples[$0] }
    }

    private static func u16(_ b: [UInt8], _ i: Int) -> UInt16 { UInt16(b[i]) | UInt16(b[i + 1]) << 8 }
    private static func u32(_ b: [UInt8], _ i: Int) -> UInt32 { UInt32(u16(b, i)) | UInt32(u16(b, i + 2)) << 16 }
}
