// WAV (WAVReader): arbitrary bytes, fed whole and in pieces, give the same samples or the same error.

/// One fuzz input: a WAV file (or not); the first byte picks the piece size for the second pass.
func fuzzWAV(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    func decode(pieceSize: Int) -> (samples: [Int16], error: WAVError?) {
        var reader = WAVReader()
        var out: [Int16] = []
        var i = 0
        do throws(WAVError) {
            while i < bytes.count {
                let end = min(bytes.count, i + pieceSize)
                try reader.feed(UnsafeRawBufferPointer(rebasing: bytes[i..<end])) { out.append(contentsOf: $0) }
                i = end
            }
            try reader.finish { out.append(contentsOf: $0) }
        } catch {
            return (out, error)
        }
        if let f = reader.format {
            precondition(f.channels >= 1 && f.channels <= 8 && (f.bitsPerSample == 8 || f.bitsPerSample == 16), "format out of range")
        }
        // Never more samples than the bytes could hold.
        precondition(out.count <= size, "more samples than input bytes")
        return (out, nil)
    }
    let whole = decode(pieceSize: max(1, size))
    let split = decode(pieceSize: 1 + Int(size > 0 ? bytes[0] % 17 : 0))
    precondition(whole.error == split.error, "piece size changed the error: \(String(describing: whole.error)) vs \(String(describing: split.error))")
    if whole.error == nil { precondition(whole.samples == split.samples, "piece size changed the samples") }
    return 0
}
