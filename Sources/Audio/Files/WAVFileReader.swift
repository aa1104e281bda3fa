/// Reads a WAV file in 4 KiB pieces through `WAVReader`.
public final class WAVFileReader: AudioFileReader {
    private let file: FileDescriptor
    private var parser = WAVReader()
    private var bytes = [UInt8](repeating: 0, count: 4096)
    /// Decoded samples not yet returned: about one read's worth (4096 bytes of 8-bit mono).
    private var queue = [Int16](repeating: 0, count: 4096)
    private var head = 0, tail = 0
    private var ended = false
    public private(set) var format = WAVFormat(sampleRate: 8000)
    public var sampleRate: Int { format.sampleRate }

    /// Opens `path` and reads up to its data chunk; throws if that is not a WAV file this plays.
    public init(path: String) throws(AudioFileError) {
        file = try FileDescriptor(reading: path)
        while parser.format == nil {
            guard try refill() else { throw .wav(.truncated(needed: 8, available: 0)) }
        }
        format = parser.format ?? format
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioFileError) -> Int {
        while head == tail {
            guard try refill() else { return 0 }
        }
        let n = min(buffer.count, tail - head)
        for i in 0..<n { buffer[i] = queue[head + i] }
        head += n
        return n
    }

    /// Reads and decodes one piece; false once the file is exhausted.
    private func refill() throws(AudioFileError) -> Bool {
        guard !ended else { return false }
        if head == tail { head = 0; tail = 0 }
        let n = try bytes.withUnsafeMutableBufferPointer { (b) throws(AudioFileError) in try file.read(into: UnsafeMutableRawBufferPointer(b)) }
        var decoded: [Int16] = []
        let result: Result<Void, WAVError>
        if n == 0 {
            ended = true
            result = Result { () throws(WAVError) in try parser.finish { decoded += $0 } }
        } else {
            result = bytes.withUnsafeBufferPointer { b in
                Result { () throws(WAVError) in try parser.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[0..<n]))) { decoded += $0 } }
            }
        }
        append(decoded)
        if case let .failure(error) = result { throw .wav(error) }
        return n > 0 || !decoded.isEmpty
    }

    private func append(_ samples: [Int16]) {
        if tail + samples.count > queue.count { queue += [Int16](repeating: 0, count: tail + samples.count - queue.count) }
        for s in samples { queue[tail] = s; tail += 1 }
    }
}
