/// Writes 16-bit PCM WAV (mono, or interleaved stereo); the header's sizes are filled in by `finish`.
public final class WAVFileWriter: AudioFileWriter {
    private let file: FileDescriptor
    public let sampleRate: Int
    public let channels: Int
    private var dataLength = 0
    private var finished = false
    private var bytes = [UInt8](repeating: 0, count: 8192)

    public init(path: String, sampleRate: Int, channels: Int = 1) throws(AudioFileError) {
        file = try FileDescriptor(writing: path)
        self.sampleRate = sampleRate
        self.channels = max(1, min(32, channels))
        try file.write(WAVFormat(sampleRate: sampleRate, channels: self.channels).header(dataLength: 0))
    }

    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(AudioFileError) {
        guard !finished else { throw .closed }
        var i = 0
        while i < samples.count {
            let n = min(samples.count - i, bytes.count / 2)
            for k in 0..<n {
                let v = UInt16(bitPattern: samples[i + k])
                bytes[2 * k] = UInt8(v & 0xFF)
                bytes[2 * k + 1] = UInt8(v >> 8)
            }
            try bytes.withUnsafeBufferPointer { (b) throws(AudioFileError) in try file.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[0..<(2 * n)]))) }
            i += n
            dataLength += 2 * n
        }
    }

    public func finish() throws(AudioFileError) {
        guard !finished else { return }
        finished = true
        try file.write(WAVFormat(sampleRate: sampleRate, channels: channels).header(dataLength: dataLength), at: 0)
    }
}
