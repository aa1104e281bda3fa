import COpusFile

/// Reads Ogg Opus files with libopusfile: mono 16-bit at 48 kHz (Opus always decodes at 48 kHz).
public final class OggOpusFileReader: AudioFileReader {
    private let file: OpaquePointer
    private let channels: Int
    public var sampleRate: Int { 48_000 }
    private var interleaved: [Int16] = []

    public init(path: String) throws(AudioFileError) {
        var error: Int32 = 0
        guard let of = op_open_file(path, &error) else { throw .opus(error) }
        file = of
        channels = Int(max(1, op_channel_count(of, -1)))
        interleaved = [Int16](repeating: 0, count: 5760 * channels)
    }

    deinit { op_free(file) }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioFileError) -> Int {
        guard buffer.count > 0 else { return 0 }
        let want = min(buffer.count, 5760) * channels
        let channels = self.channels
        let n = interleaved.withUnsafeMutableBufferPointer { op_read(file, $0.baseAddress, Int32(want), nil) }
        guard n >= 0 else { throw .opus(n) }
        let frames = Int(n)
        for i in 0..<frames {
            var sum = 0
            for c in 0..<channels { sum += Int(interleaved[i * channels + c]) }
            buffer[i] = Int16(sum / channels)
        }
        return frames
    }
}
