/// What protocol a datagram on a shared WebRTC port carries.
public enum PacketKind: Sendable, Hashable {
    case stun
    case zrtp
    case dtls
    case turnChannel
    case rtp
    case rtcp
    case unknown
}

/// Demultiplexes STUN, DTLS, RTP and RTCP arriving on one UDP port.
///
/// RFC 7983 §7 splits by the first byte:
///
/// ```
///              +----------------+
///              |        [0..3] -+--> forward to STUN
///  packet -->  |      [16..19] -+--> forward to ZRTP
///              |      [20..63] -+--> forward to DTLS
///              |      [64..79] -+--> forward to TURN Channel
///              |    [128..191] -+--> forward to RTP/RTCP
///              +----------------+
/// ```
///
/// and RFC 5761 §4 tells RTCP from RTP by the second byte: RTCP packet types
/// 192-223 collide with RTP payload types 64-95 with the marker bit set, which
/// is why those RTP payload types must not be used when multiplexing.
public enum PacketDemux {
    /// Classifies by the first byte alone; 128-191 is reported as `.rtp` (use the
    /// two-byte form to split RTP from RTCP).
    public static func classify(_ firstByte: UInt8) -> PacketKind {
        switch firstByte {
        case 0...3: .stun
        case 16...19: .zrtp
        case 20...63: .dtls
        case 64...79: .turnChannel
        case 128...191: .rtp
        default: .unknown
        }
    }

    /// Classifies by the first two bytes, telling RTCP (second byte 192-223) from RTP.
    public static func classify(_ firstByte: UInt8, _ secondByte: UInt8) -> PacketKind {
        let kind = classify(firstByte)
        if kind == .rtp, (192...223).contains(secondByte) { return .rtcp }
        return kind
    }

    /// Classifies a whole datagram; empty input is `.unknown`.
    public static func classify(_ datagram: UnsafeRawBufferPointer) -> PacketKind {
        switch datagram.count {
        case 0: .unknown
        case 1: classify(datagram[0]) == .rtp ? .unknown : classify(datagram[0])
        default: classify(datagram[0], datagram[1])
        }
    }

    /// Classifies a whole datagram; empty input is `.unknown`.
    public static func classify(_ datagram: some ContiguousBytesView) -> PacketKind {
        datagram.withRawBytes { classify($0) }
    }
}
