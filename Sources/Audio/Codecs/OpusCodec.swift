import COpus

/// Opus (RFC 6716, RTP payload RFC 7587) over libopus: mono, 20 ms frames at 8, 16 or 48 kHz.
///
/// The encoder sends in-band FEC (a low-rate copy of each frame inside the next packet) tuned for
/// the expected loss; `conceal(next:)` decodes that copy when the jitter buffer holds the packet
/// after a gap, and libopus' own packet-loss concealment otherwise.
public final class OpusCodec: Codec {
    public struct Configuration: Sendable, Hashable {
        public var sampleRate: SampleRate = .hz48000
        /// Target bitrate in bits per second.
        public var bitrate: Int32 = 32_000
        /// Percent of packets the encoder expects to be lost (drives how much FEC it sends).
        public var expectedLossPercent: Int32 = 10
        public var inbandFEC = true
        public var complexity: Int32 = 5
        public init() {}
    }

    public let sampleRate: SampleRate
    public var clockRate: Int { 48_000 }
    /// Largest payload `encode` writes (RFC 7587 bounds a packet at 1275 bytes per frame).
    public static let maxPayload = 1275

    private let encoder: OpusEncoder
    private let decoder: OpaquePointer

    public init(_ configuration: Configuration = Configuration()) throws(CodecError) {
        sampleRate = configuration.sampleRate
        encoder = try OpusEncoder(configuration)
        var error: Int32 = 0
        guard let dec = opus_decoder_create(Int32(sampleRate.rawValue), 1, &error), error == OPUS_OK else {
            throw .creationFailed(code: error)
        }
        decoder = dec
    }

    deinit { opus_decoder_destroy(decoder) }

    public func encode(_ frame: AudioFrame, into output: UnsafeMutableRawBufferPointer) throws(CodecError) -> Int {
        try encoder.encode(frame, into: output)
    }

    public func decode(_ payload: UnsafeRawBufferPointer, into frame: inout AudioFrame) throws(CodecError) {
        guard frame.rate == sampleRate else { throw .rateMismatch(expected: sampleRate, actual: frame.rate) }
        guard let base = payload.baseAddress, payload.count > 0 else { throw .invalidPayload(code: OPUS_INVALID_PACKET) }
        // A packet longer than 20 ms would overrun the frame: ask libopus first.
        let samples = opus_decoder_get_nb_samples(decoder, base.assumingMemoryBound(to: UInt8.self), Int32(payload.count))
        guard samples > 0 else { throw .invalidPayload(code: samples) }
        guard Int(samples) == frame.count else { throw .wrongFrameLength(expected: frame.count, actual: Int(samples)) }
        try decode(base.assumingMemoryBound(to: UInt8.self), Int32(payload.count), fec: false, into: &frame)
    }

    public func conceal(next: UnsafeRawBufferPointer?, into frame: inout AudioFrame) throws(CodecError) {
        guard frame.rate == sampleRate else { throw .rateMismatch(expected: sampleRate, actual: frame.rate) }
        // With FEC requested and no FEC data in `next`, libopus falls back to plain concealment.
        if let next, let base = next.baseAddress, next.count > 0 {
            try decode(base.assumingMemoryBound(to: UInt8.self), Int32(next.count), fec: true, into: &frame)
        } else {
            try decode(nil, 0, fec: false, into: &frame)
        }
    }

    private func decode(_ data: UnsafePointer<UInt8>?, _ length: Int32, fec: Bool, into frame: inout AudioFrame) throws(CodecError) {
        let decoder = self.decoder
        let n = frame.withMutableSamples { s in
            opus_decode(decoder, data, length, s.baseAddress!, Int32(s.count), fec ? 1 : 0)
        }
        guard n >= 0 else { throw .invalidPayload(code: n) }
        guard Int(n) == frame.count else { throw .wrongFrameLength(expected: frame.count, actual: Int(n)) }
    }
}
