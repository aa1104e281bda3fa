/// An encoder writing mono Int16 samples to a file; `finish` completes the file (headers, flush).
public protocol AudioFileWriter: AnyObject {
    var sampleRate: Int { get }
    func write(_ samples: UnsafeBufferPointer<Int16>) throws(AudioFileError)
    func finish() throws(AudioFileError)
}

extension AudioFileWriter {
    public func write(_ frame: AudioFrame) throws(AudioFileError) {
        try frame.withSamples { (s) throws(AudioFileError) in try write(s) }
    }

    public func write(_ samples: [Int16]) throws(AudioFileError) {
        try samples.withUnsafeBufferPointer { (s) throws(AudioFileError) in try write(s) }
    }
}
