/// A decoder of one audio file, read in bounded pieces: mono Int16 at the file's own rate.
public protocol AudioFileReader: AnyObject {
    /// Samples per second of what `read` returns.
    var sampleRate: Int { get }
    /// Fills up to `buffer.count` samples; returns how many, 0 at the end.
    func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioFileError) -> Int
}

extension AudioFileReader {
    /// Reads everything (tests and short prompts; players stream with `FilePlayback`).
    public func readAll() throws(AudioFileError) -> [Int16] {
        var all: [Int16] = []
        var block = [Int16](repeating: 0, count: 4096)
        while true {
            let n = try block.withUnsafeMutableBufferPointer { (b) throws(AudioFileError) in try read(into: b) }
            if n == 0 { return all }
            all += block[0..<n]
        }
    }
}
