import Wire

/// Audio codecs a plain-RTP telephony leg offers (RFC 3551 static types, RFC 7587 Opus,
/// RFC 4733 telephone events).
public enum AudioCodec: String, Hashable, Sendable, CaseIterable {
    case pcmu = "PCMU"
    case pcma = "PCMA"
    case opus = "opus"
    case telephoneEvent = "telephone-event"

    /// The payload type this side offers.
    public var defaultPayloadType: UInt8 {
        switch self {
        case .pcmu: 0
        case .pcma: 8
        case .opus: 111
        case .telephoneEvent: 101
        }
    }

    public var clockRate: UInt32 { self == .opus ? 48000 : 8000 }
    public var channels: Int? { self == .opus ? 2 : nil }

    public func rtpMap(payloadType: UInt8) -> SDPRTPMap {
        SDPRTPMap(payloadType: payloadType, encodingName: rawValue, clockRate: clockRate, channels: channels)
    }

    /// The codec named by an rtpmap (case-insensitive name and matching clock rate), or a static type.
    static func identify(payloadType: UInt8, map: SDPRTPMap?) -> AudioCodec? {
        if let map {
            return allCases.first { $0.rawValue.lowercased() == map.encodingName.lowercased() && $0.clockRate == map.clockRate }
        }
        switch payloadType {
        case 0: return .pcmu
        case 8: return .pcma
        default: return nil
        }
    }
}
