/// A streaming WAV (RIFF/WAVE PCM) decoder: feed bytes in any pieces, get mono Int16 samples.
///
/// ```
/// "RIFF" <size> "WAVE" then chunks: <id:4> <size:4 LE> <body> [pad to even]
///   "fmt ": tag(2) channels(2) rate(4) byteRate(4) blockAlign(2) bits(2) [extension]
///   "data": interleaved little-endian samples; other chunks (LIST, fact…) are skipped
/// ```
/// Memory is bounded whatever the input: a chunk header, at most 256 bytes of fmt, one partial
/// sample frame and a 1024-sample output block are all it keeps. 8-bit unsigned and 16-bit signed
/// PCM at any rate with 1–8 channels (mixed down to mono). Pure Swift, fuzzed.
public struct WAVReader {
    private enum State: Equatable {
        case riff
        case chunkHeader
        case format(size: Int)
        case skip(remaining: Int)
        case data(remaining: Int?)
        case pad(then: PadNext)
    }

    private enum PadNext: Equatable { case header }

    public private(set) var format: WAVFormat?
    private var state = State.riff
    private var pending: [UInt8] = []
    private var scratch = [Int16](repeating: 0, count: Self.blockSamples)
    private var scratchCount = 0
    private var dataOdd = false

    static let blockSamples = 1024
    static let maximumFormatChunk = 256

    public init() {
        pending.reserveCapacity(Self.maximumFormatChunk)
    }

    /// True once the data chunk has been read to its declared end.
    public private(set) var isComplete = false

    /// Feeds bytes; `output` receives mono samples in blocks as they decode.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, output: (UnsafeBufferPointer<Int16>) -> Void) throws(WAVError) {
        var i = 0
        while i < bytes.count {
            switch state {
            case .riff:
                i += fill(to: 12, from: bytes, at: i)
                guard pending.count == 12 else { return }
                guard pending[0..<4].elementsEqual("RIFF".utf8) else { throw .notRIFF }
                guard pending[8..<12].elementsEqual("WAVE".utf8) else { throw .notWAVE }
                pending.removeAll(keepingCapacity: true)
                state = .chunkHeader
            case .chunkHeader:
                i += fill(to: 8, from: bytes, at: i)
                guard pending.count == 8 else { return }
                let size = Int(pending[4]) | Int(pending[5]) << 8 | Int(pending[6]) << 16 | Int(pending[7]) << 24
                let id = (pending[0], pending[1], pending[2], pending[3])
                pending.removeAll(keepingCapacity: true)
                dataOdd = size % 2 == 1
                if id == (0x66, 0x6D, 0x74, 0x20) {  // "fmt "
                    guard size >= 16 && size <= Self.maximumFormatChunk else { throw .badFormat("fmt chunk of \(size) bytes") }
                    state = .format(size: size)
                } else if id == (0x64, 0x61, 0x74, 0x61) {  // "data"
                    guard var f = format else { throw .missingFormat }
                    let known = size != 0 && size != 0xFFFF_FFFF
                    f.dataLength = known ? size : nil
                    format = f
                    state = .data(remaining: known ? size : nil)
                } else {
                    state = .skip(remaining: size + (size % 2))
                }
            case let .format(size):
                i += fill(to: size, from: bytes, at: i)
                guard pending.count == size else { return }
                format = try Self.parseFormat(pending)
                pending.removeAll(keepingCapacity: true)
                state = dataOdd ? .pad(then: .header) : .chunkHeader
            case let .skip(remaining):
                let n = min(remaining, bytes.count - i)
                i += n
                state = remaining - n == 0 ? .chunkHeader : .skip(remaining: remaining - n)
            case .pad:
                i += 1
                state = .chunkHeader
            case let .data(remaining):
                guard let f = format else { throw .missingFormat }
                let n = remaining.map { min($0, bytes.count - i) } ?? (bytes.count - i)
                decode(UnsafeRawBufferPointer(rebasing: bytes[i..<(i + n)]), format: f, output: output)
                i += n
                if let remaining {
                    if remaining - n == 0 {
                        flush(output)
                        pending.removeAll(keepingCapacity: true)  // a declared length that ends mid-frame
                        isComplete = true
                        state = dataOdd ? .pad(then: .header) : .chunkHeader
                    } else {
                        state = .data(remaining: remaining - n)
                    }
                }
            }
        }
        flush(output)
    }

    /// Call at the end of input: throws when it stopped inside a header or a declared chunk, or
    /// before any data chunk.
    public mutating func finish(output: (UnsafeBufferPointer<Int16>) -> Void) throws(WAVError) {
        flush(output)
        switch state {
        case .riff: throw .truncated(needed: 12, available: pending.count)
        case let .format(size): throw .truncated(needed: size, available: pending.count)
        case let .data(remaining):
            if let remaining { throw .truncated(needed: remaining, available: 0) }
        case .chunkHeader, .skip, .pad:
            // Trailing chunks after the data are fine; a file that never reached its data is not.
            if !isComplete { throw .truncated(needed: 8, available: pending.count) }
        }
    }

    static func parseFormat(_ b: [UInt8]) throws(WAVError) -> WAVFormat {
        func u16(_ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
        func u32(_ o: Int) -> Int { u16(o) | u16(o + 2) << 16 }
        var tag = UInt16(u16(0))
        if tag == 0xFFFE {
            guard b.count >= 40 else { throw .badFormat("extensible fmt of \(b.count) bytes") }
            tag = UInt16(u16(24))  // first two bytes of the sub-format GUID
        }
        guard tag == 1 else { throw .unsupportedEncoding(formatTag: tag) }
        let channels = u16(2), rate = u32(4), bits = u16(14)
        guard channels >= 1 && channels <= 8 else { throw .badFormat("\(channels) channels") }
        guard rate >= 1000 && rate <= 384_000 else { throw .badFormat("sample rate \(rate)") }
        guard bits == 8 || bits == 16 else { throw .unsupportedBitsPerSample(bits) }
        guard u16(12) == channels * bits / 8 else { throw .badFormat("block align \(u16(12))") }
        return WAVFormat(sampleRate: rate, channels: channels, bitsPerSample: bits)
    }

    /// Appends from `bytes[at...]` to `pending` until it holds `count`; returns bytes taken.
    private mutating func fill(to count: Int, from bytes: UnsafeRawBufferPointer, at start: Int) -> Int {
        let n = min(count - pending.count, bytes.count - start)
        if n > 0 { pending.append(contentsOf: bytes[start..<(start + n)]) }
        return max(0, n)
    }

    private mutating func decode(_ bytes: UnsafeRawBufferPointer, format f: WAVFormat, output: (UnsafeBufferPointer<Int16>) -> Void) {
        let block = f.blockAlign
        var i = 0
        // Complete a sample frame split across feeds.
        if !pending.isEmpty {
            let n = min(block - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<n])
            i = n
            guard pending.count == block else { return }
            let frame = pending
            pending.removeAll(keepingCapacity: true)
            frame.withUnsafeBytes { emit(sampleFrame: $0, at: 0, format: f, output: output) }
        }
        while i + block <= bytes.count {
            emit(sampleFrame: bytes, at: i, format: f, output: output)
            i += block
        }
        if i < bytes.count { pending.append(contentsOf: bytes[i...]) }
    }

    private mutating func emit(sampleFrame b: UnsafeRawBufferPointer, at o: Int, format f: WAVFormat, output: (UnsafeBufferPointer<Int16>) -> Void) {
        var sum = 0
        for c in 0..<f.channels {
            if f.bitsPerSample == 8 {
                sum += (Int(b[o + c]) - 128) << 8
            } else {
                sum += Int(Int16(bitPattern: UInt16(b[o + 2 * c]) | UInt16(b[o + 2 * c + 1]) << 8))
            }
        }
        scratch[scratchCount] = Int16(sum / f.channels)
        scratchCount += 1
        if scratchCount == scratch.count { flush(output) }
    }

    private mutating func flush(_ output: (UnsafeBufferPointer<Int16>) -> Void) {
        guard scratchCount > 0 else { return }
        let n = scratchCount
        scratchCount = 0
        scratch.withUnsafeBufferPointer { output(UnsafeBufferPointer(rebasing: $0[0..<n])) }
    }
}
