import COpus

/// An Opus encoder alone (mono, 20 ms frames), for what only ever encodes: a mixer's shared mix
/// and each mixed speaker's own mix. `OpusCodec` also holds a decoder (18 KiB of libopus state
/// at 48 kHz) that an encoder-only user would carry for nothing; the encoder is 43 KiB.
/// `OpusCodec` encodes through one of these, so both send the same packets for a `Configuration`.
public final class OpusEncoder {
    public let sampleRate: SampleRate
    private let encoder: OpaquePointer
    /// Percent of packets the encoder plans its in-band FEC and loss resilience for (see `LossPlan`).
    public private(set) var expectedLossPercent: Int32

    public init(_ configuration: OpusCodec.Configuration = OpusCodec.Configuration()) throws(CodecError) {
        sampleRate = configuration.sampleRate
        var error: Int32 = 0
        guard let enc = opus_encoder_create(Int32(sampleRate.rawValue), 1, OPUS_APPLICATION_VOIP, &error), error == OPUS_OK else {
            throw .creationFailed(code: error)
        }
        encoder = enc
        expectedLossPercent = configuration.expectedLossPercent
        _ = sb_opus_set_bitrate(enc, configuration.bitrate)
        _ = sb_opus_set_inband_fec(enc, configuration.inbandFEC ? 1 : 0)
        _ = sb_opus_set_packet_loss_perc(enc, configuration.expectedLossPercent)
        _ = sb_opus_set_complexity(enc, configuration.complexity)
    }

    deinit { opus_encoder_destroy(encoder) }

    /// Plans for `percent` loss from the next frame on (clamped to 0–100).
    public func setExpectedLoss(percent: Int32) {
        let percent = min(100, max(0, percent))
        guard percent != expectedLossPercent else { return }
        _ = sb_opus_set_packet_loss_perc(encoder, percent)
        expectedLossPercent = percent
    }

    /// Encodes one 20 ms frame into `output`; returns the payload length.
    public func encode(_ frame: AudioFrame, into output: UnsafeMutableRawBufferPointer) throws(CodecError) -> Int {
        guard frame.rate == sampleRate else { throw .rateMismatch(expected: sampleRate, actual: frame.rate) }
        guard let base = output.baseAddress, output.count > 0 else { throw .outputTooSmall(needed: 1, available: 0) }
        let encoder = self.encoder
        let n = frame.withSamples { s in
            opus_encode(encoder, s.baseAddress!, Int32(s.count), base.assumingMemoryBound(to: UInt8.self), Int32(min(output.count, Int(Int32.max))))
        }
        guard n > 0 else {
            if n == OPUS_BUFFER_TOO_SMALL { throw .outputTooSmall(needed: OpusCodec.maxPayload, available: output.count) }
            throw .encodeFailed(code: n)
        }
        return Int(n)
    }
}
