import CSpeexDSP

/// Plays an `AudioFileReader` as 20 ms frames at a call's rate, resampling from the file's rate
/// (speexdsp). Memory stays bounded by one read block whatever the file's length.
public final class FilePlayback {
    public let reader: any AudioFileReader
    public let rate: SampleRate
    private let resampler: OpaquePointer?
    private var input = [Int16](repeating: 0, count: 1024)
    private var inputHead = 0, inputTail = 0
    private var readerEnded = false
    public private(set) var isFinished = false

    public init(_ reader: any AudioFileReader, rate: SampleRate) throws(AudioFileError) {
        self.reader = reader
        self.rate = rate
        if reader.sampleRate == rate.rawValue {
            resampler = nil
        } else {
            var error: Int32 = 0
            guard reader.sampleRate > 0, let st = speex_resampler_init(1, UInt32(reader.sampleRate), UInt32(rate.rawValue), 5, &error), error == 0 else {
                throw .noAudio
            }
            speex_resampler_skip_zeros(st)
            resampler = st
        }
    }

    deinit { if let resampler { speex_resampler_destroy(resampler) } }

    /// Fills `frame` with the next 20 ms; false once the file is exhausted (the frame is then
    /// silence-padded or silent).
    @discardableResult
    public func next(into frame: inout AudioFrame) throws(AudioFileError) -> Bool {
        guard !isFinished, frame.rate == rate else { frame.clear(); return false }
        var filled = 0
        let n = frame.count
        while filled < n {
            if inputHead == inputTail {
                if readerEnded { break }
                inputHead = 0
                inputTail = try input.withUnsafeMutableBufferPointer { (b) throws(AudioFileError) in try reader.read(into: b) }
                if inputTail == 0 { readerEnded = true; break }
            }
            let (used, made) = frame.withMutableSamples { out -> (Int, Int) in
                input.withUnsafeBufferPointer { src -> (Int, Int) in
                    let available = inputTail - inputHead
                    if let resampler {
                        var inLen = UInt32(available)
                        var outLen = UInt32(n - filled)
                        speex_resampler_process_int(resampler, 0, src.baseAddress! + inputHead, &inLen, out.baseAddress! + filled, &outLen)
                        return (Int(inLen), Int(outLen))
                    }
                    let k = min(available, n - filled)
                    for i in 0..<k { out[filled + i] = src[inputHead + i] }
                    return (k, k)
                }
            }
            inputHead += used
            filled += made
            if used == 0 && made == 0 { break }
        }
        if filled < n {
            frame.withMutableSamples { out in for i in filled..<n { out[i] = 0 } }
            isFinished = true
            return filled > 0
        }
        return true
    }
}
