/// The codecs this SFU forwards and their canonical (consumer-side) payload types.
enum CodecCatalog {
    /// The payload type of RTX (RFC 4588) toward subscribers for a canonical video codec:
    /// the next one up (VP8 96 → 97, H.264 102 → 103).
    static func retransmissionPayloadType(for codec: RTPCodec) -> UInt8? {
        codec.kind == .video ? codec.payloadType + 1 : nil
    }

    /// The consumer-side codec for what a producer negotiated, or nil if we cannot carry it.
    /// Format parameters follow the producer (an H.264 profile must match end to end).
    static func canonical(for codec: RTPCodec) -> RTPCodec? {
        switch codec.name.lowercased() {
        case "opus":
            guard codec.clockRate == 48_000 else { return nil }
            return .opus
        case "vp8":
            return .vp8
        case "h264":
            var h264 = RTPCodec.h264
            if !codec.formatParameters.isEmpty { h264.formatParameters = codec.formatParameters }
            return h264
        default:
            return nil
        }
    }

    /// True for an H.264 format we forward: packetization-mode 1 (RFC 6184 §8.1), any profile.
    static func acceptsH264(formatParameters: String) -> Bool {
        formatParameters.split(separator: ";").contains { $0.trimmedSpaces == "packetization-mode=1" }
    }
}
