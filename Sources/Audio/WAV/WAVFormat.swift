/// The PCM layout of a WAV file: what its fmt chunk says.
public struct WAVFormat: Sendable, Hashable {
    public var sampleRate: Int
    public var channels: Int
    /// 8 (unsigned) or 16 (signed little-endian).
    public var bitsPerSample: Int
    /// Length of the data chunk in bytes, when known (streams write 0 or 0xFFFFFFFF).
    public var dataLength: Int?

    public init(sampleRate: Int, channels: Int = 1, bitsPerSample: Int = 16, dataLength: Int? = nil) {
        self.sampleRate = sampleRate
        self.channels = channels
        self.bitsPerSample = bitsPerSample
        self.dataLength = dataLength
    }

    /// Bytes per sample frame (all channels).
    public var blockAlign: Int { channels * bitsPerSample / 8 }

    /// Duration in seconds, when the data length is known.
    public var duration: Double? { dataLength.map { Double($0 / blockAlign) / Double(sampleRate) } }

    /// The 44-byte header of a canonical PCM WAV file holding `dataLength` bytes.
    ///
    /// ```
    /// "RIFF" size "WAVE"  "fmt " 16  tag=1 channels rate byteRate blockAlign bits  "data" size
    /// ```
    public func header(dataLength: Int) -> [UInt8] {
        var b: [UInt8] = []
        b.reserveCapacity(44)
        func u32(_ v: Int) { let x = UInt32(truncatingIfNeeded: v); b += [UInt8(x & 0xFF), UInt8(x >> 8 & 0xFF), UInt8(x >> 16 & 0xFF), UInt8(x >> 24)] }
        func u16(_ v: Int) { b += [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
        b += Array("RIFF".utf8); u32(36 + dataLength); b += Array("WAVE".utf8)
        b += Array("fmt ".utf8); u32(16); u16(1); u16(channels); u32(sampleRate); u32(sampleRate * blockAlign); u16(blockAlign); u16(bitsPerSample)
        b += Array("data".utf8); u32(dataLength)
        return b
    }
}
