import COpusEnc

/// Writes mono Ogg Opus files with libopusenc (which resamples any input rate to 48 kHz).
public final class OggOpusFileWriter: AudioFileWriter {
    private let encoder: OpaquePointer
    private let comments: OpaquePointer
    public let sampleRate: Int
    private var finished = false

    public init(path: String, sampleRate: Int, bitrate: Int32 = 32_000) throws(AudioFileError) {
        guard let c = ope_comments_create() else { throw .opus(-1) }
        var error: Int32 = 0
        guard let enc = ope_encoder_create_file(path, c, Int32(sampleRate), 1, 0, &error), error == 0 else {
            ope_comments_destroy(c)
            throw .opus(error)
        }
        comments = c
        encoder = enc
        self.sampleRate = sampleRate
        _ = sb_ope_set_bitrate(enc, bitrate)
    }

    deinit {
        ope_encoder_destroy(encoder)
        ope_comments_destroy(comments)
    }

    public func write(_ samples: UnsafeBufferPointer<Int16>) throws(AudioFileError) {
        guard !finished else { throw .closed }
        guard let base = samples.baseAddress, samples.count > 0 else { return }
        let status = ope_encoder_write(encoder, base, Int32(samples.count))
        guard status == 0 else { throw .opus(status) }
    }

    public func finish() throws(AudioFileError) {
        guard !finished else { return }
        finished = true
        let status = ope_encoder_drain(encoder)
        guard status == 0 else { throw .opus(status) }
    }
}
