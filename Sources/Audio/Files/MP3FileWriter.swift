import CLame

/// Writes mono MP3 (constant bitrate) with libmp3lame, with a LAME/Xing tag so decoders know the
/// exact length.
public final class MP3FileWriter: AudioFileWriter {
    private let file: FileDescriptor
    private let lame: OpaquePointer
    public let sampleRate: Int
    private var output = [UInt8](repeating: 0, count: 16_384)
    private var finished = false

    /// `bitrate` in kbit/s (LAME rounds to a legal MPEG bitrate).
    public init(path: String, sampleRate: Int, bitrate: Int32 = 48) throws(AudioFileError) {
        guard let gf = lame_init() else { throw .mp3Encoder(-1) }
        lame_set_in_samplerate(gf, Int32(sampleRate))
        lame_set_num_channels(gf, 1)
        lame_set_mode(gf, MONO)
        lame_set_brate(gf, bitrate)
        lame_set_quality(gf, 5)
        lame_set_bWriteVbrTag(gf, 1)
        let status = lame_init_params(gf)
        guard status >= 0 else {
            lame_close(gf)
            throw .mp3Encoder(status)
        }
        lame = gf
        self.sampleRate = sampleRate
        do {
            file = try FileDescriptor(writing: path)
        } catch {
            lame_close(gf)
            throw error
        }
    }

    deinit { lame_close(lame) }

    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(AudioFileError) {
        guard !finished else { throw .closed }
        var i = 0
        while i < samples.count {
            // LAME needs 1.25 × samples + 7200 bytes of output room per call.
            let n = min(samples.count - i, (output.count - 7200) * 4 / 5)
            let written = output.withUnsafeMutableBufferPointer { out in
                lame_encode_buffer(lame, samples.baseAddress! + i, nil, Int32(n), out.baseAddress, Int32(out.count))
            }
            guard written >= 0 else { throw .mp3Encoder(written) }
            try output.withUnsafeBufferPointer { (b) throws(AudioFileError) in try file.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[0..<Int(written)]))) }
            i += n
        }
    }

    public func finish() throws(AudioFileError) {
        guard !finished else { return }
        finished = true
        let written = output.withUnsafeMutableBufferPointer { lame_encode_flush(lame, $0.baseAddress, Int32($0.count)) }
        guard written >= 0 else { throw .mp3Encoder(written) }
        try output.withUnsafeBufferPointer { (b) throws(AudioFileError) in try file.write(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: b[0..<Int(written)]))) }
        // The first frame written was a placeholder for this tag.
        let tagLength = output.withUnsafeMutableBufferPointer { lame_get_lametag_frame(lame, $0.baseAddress, $0.count) }
        if tagLength > 0 && tagLength <= output.count { try file.write(Array(output[0..<tagLength]), at: 0) }
    }
}
