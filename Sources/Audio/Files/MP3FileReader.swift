import CMpg123

/// Reads MP3 (MPEG-1/2 layer III) files with libmpg123, mixed down to mono 16-bit.
public final class MP3FileReader: AudioFileReader {
    private let handle: OpaquePointer
    public private(set) var sampleRate: Int = 0
    private var ended = false
    /// An error found after the samples returned with it, thrown by the next `read`.
    private var pending: AudioFileError?

    public init(path: String) throws(AudioFileError) {
        var error: Int32 = 0
        guard let h = mpg123_new(nil, &error) else { throw .mp3("cannot create decoder (\(error))") }
        handle = h
        // Mixed to mono, 16-bit, at whatever rate the file has; gapless (the LAME tag's encoder delay
        // and padding trimmed); quiet (no messages on stderr).
        let flags = Int(MPG123_MONO_MIX.rawValue | MPG123_GAPLESS.rawValue | MPG123_QUIET.rawValue)
        mpg123_param2(h, Int32(MPG123_FLAGS.rawValue), flags, 0)
        mpg123_format_none(h)
        var rates: UnsafePointer<Int>?
        var count = 0
        mpg123_rates(&rates, &count)
        for i in 0..<count { mpg123_format(h, rates![i], Int32(MPG123_MONO.rawValue), Int32(MPG123_ENC_SIGNED_16.rawValue)) }
        guard mpg123_open(h, path) == MPG123_OK.rawValue else { throw .mp3(Self.message(h)) }
        var rate = 0
        var channels: Int32 = 0
        var encoding: Int32 = 0
        // Finds the first frame (skipping ID3 and junk up to mpg123's resync limit).
        guard mpg123_getformat(h, &rate, &channels, &encoding) == MPG123_OK.rawValue, rate > 0 else {
            throw .mp3(Self.message(h))
        }
        sampleRate = rate
    }

    deinit {
        mpg123_close(handle)
        mpg123_delete(handle)
    }

    public func read(into buffer: UnsafeMutableBufferPointer<Int16>) throws(AudioFileError) -> Int {
        if let failure = pending {
            pending = nil
            throw failure
        }
        guard !ended, let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        while true {
            var done = 0
            let status = mpg123_read(handle, UnsafeMutableRawPointer(base), buffer.count * 2, &done)
            if status == MPG123_NEW_FORMAT.rawValue, let failure = rateChange() {
                // What came before the change is this call's; the error is the next one's.
                ended = true
                if done > 0 { pending = failure; return done / 2 }
                throw failure
            }
            if done > 0 { return done / 2 }
            switch status {
            case MPG123_OK.rawValue, MPG123_NEW_FORMAT.rawValue: continue
            case MPG123_DONE.rawValue:
                ended = true
                return 0
            default:
                throw .mp3(Self.message(handle))
            }
        }
    }

    /// Frames at another rate (a file joined from two encodes) would play at the wrong speed: the
    /// reader stops there with a clear error (libmpg123's own resampler is too crude to use).
    private func rateChange() -> AudioFileError? {
        var rate = 0, channels: Int32 = 0, encoding: Int32 = 0
        guard mpg123_getformat(handle, &rate, &channels, &encoding) == MPG123_OK.rawValue else { return .mp3(Self.message(handle)) }
        return rate == sampleRate ? nil : .mp3("the sample rate changes from \(sampleRate) to \(rate) Hz within the file")
    }

    private static func message(_ h: OpaquePointer) -> String {
        mpg123_strerror(h).map { String(cString: $0) } ?? "mpg123 error"
    }
}
