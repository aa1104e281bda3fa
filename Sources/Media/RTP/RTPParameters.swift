/// Audio or video (`m=` media type, RFC 8866 §5.14).
public enum MediaKind: String, Sendable, Hashable, Codable {
    case audio
    case video
}

/// A codec this SFU forwards, with the payload type used on its consumer side.
///
/// Producers may use any payload type their offer chose; the router rewrites it to the
/// canonical one so every consumer of a room can share one BUNDLE numbering.
public struct RTPCodec: Sendable, Hashable {
    public var kind: MediaKind
    /// Encoding name as in `a=rtpmap` (`opus`, `VP8`, `H264`).
    public var name: String
    public var payloadType: UInt8
    public var clockRate: UInt32
    public var channels: Int
    /// `a=fmtp` parameters, verbatim.
    public var formatParameters: String
    /// `a=rtcp-fb` values (`nack`, `nack pli`, `ccm fir`, ...).
    public var feedback: [String]

    public init(
        kind: MediaKind, name: String, payloadType: UInt8, clockRate: UInt32, channels: Int = 1,
        formatParameters: String = "", feedback: [String] = []
    ) {
        self.kind = kind
        self.name = name
        self.payloadType = payloadType
        self.clockRate = clockRate
        self.channels = channels
        self.formatParameters = formatParameters
        self.feedback = feedback
    }

    /// The value of `a=rtpmap:<pt> ...`.
    public var rtpmap: String {
        channels > 1 ? "\(name)/\(clockRate)/\(channels)" : "\(name)/\(clockRate)"
    }

    var isVideo: Bool { kind == .video }

    public static let opus = RTPCodec(
        kind: .audio, name: "opus", payloadType: 111, clockRate: 48_000, channels: 2,
        formatParameters: "minptime=10;useinbandfec=1", feedback: [])
    public static let vp8 = RTPCodec(
        kind: .video, name: "VP8", payloadType: 96, clockRate: 90_000,
        feedback: ["nack", "nack pli", "ccm fir", "goog-remb"])
    public static let h264 = RTPCodec(
        kind: .video, name: "H264", payloadType: 102, clockRate: 90_000,
        formatParameters: "level-asymmetry-allowed=1;packetization-mode=1;profile-level-id=42e01f",
        feedback: ["nack", "nack pli", "ccm fir", "goog-remb"])
}

/// Header extension ids one side negotiated (nil: not negotiated).
public struct RTPExtensionIDs: Sendable, Hashable {
    public var mid: UInt8?
    public var audioLevel: UInt8?
    public var absSendTime: UInt8?
    public var transportCC: UInt8?
    /// RFC 8852 RTP stream id and repaired RTP stream id (simulcast layers and their RTX streams).
    public var rid: UInt8?
    public var repairedRID: UInt8?

    public init(
        mid: UInt8? = nil, audioLevel: UInt8? = nil, absSendTime: UInt8? = nil, transportCC: UInt8? = nil,
        rid: UInt8? = nil, repairedRID: UInt8? = nil
    ) {
        self.mid = mid
        self.audioLevel = audioLevel
        self.absSendTime = absSendTime
        self.transportCC = transportCC
        self.rid = rid
        self.repairedRID = repairedRID
    }

    /// The ids consumers see: fixed, so every consumer m-line agrees. abs-send-time is the server's: a
    /// subscriber's receive-side estimate (REMB) then measures the link from the server, not the publisher's too.
    static let consumerSide = RTPExtensionIDs(mid: nil, audioLevel: 1, absSendTime: 2, transportCC: nil)
}

/// What a producer sends: one track on a publishing transport.
public struct ProducerParameters: Sendable, Hashable {
    public var kind: MediaKind
    /// The m-line's `a=mid`.
    public var mid: String
    /// The codec as the publisher negotiated it (its own payload type).
    public var codec: RTPCodec
    /// Primary SSRC from `a=ssrc`; nil means learn it from the MID header extension.
    public var ssrc: UInt32?
    /// RTX (RFC 4588) SSRC from `a=ssrc-group:FID` and its payload type.
    public var rtxSSRC: UInt32?
    public var rtxPayloadType: UInt8?
    public var extensions: RTPExtensionIDs
    /// `a=msid` stream and track ids, if any.
    public var streamID: String?
    public var trackID: String?
    /// Simulcast (RFC 8853): the RTP stream ids of the m-line's layers in the offer's order (empty
    /// for one stream). The producer made with these parameters is the layer listed last; the others
    /// are producers of their own (`Producer.layers`), their SSRCs learnt from the RID header extension.
    public var simulcast: [String] = []
    /// This layer's RTP stream id (set by the worker on each layer's producer).
    public var rid: String?

    public init(
        kind: MediaKind, mid: String, codec: RTPCodec, ssrc: UInt32?, rtxSSRC: UInt32? = nil,
        rtxPayloadType: UInt8? = nil, extensions: RTPExtensionIDs = RTPExtensionIDs(),
        streamID: String? = nil, trackID: String? = nil, simulcast: [String] = []
    ) {
        self.simulcast = simulcast
        self.kind = kind
        self.mid = mid
        self.codec = codec
        self.ssrc = ssrc
        self.rtxSSRC = rtxSSRC
        self.rtxPayloadType = rtxPayloadType
        self.extensions = extensions
        self.streamID = streamID
        self.trackID = trackID
    }
}

/// What a consumer sends to its subscriber: enough to write its `m=` section.
public struct ConsumerParameters: Sendable, Hashable {
    public var id: ConsumerID
    public var producerID: ProducerID
    public var kind: MediaKind
    /// The codec with its canonical payload type.
    public var codec: RTPCodec
    public var ssrc: UInt32
    public var cname: String
    public var streamID: String
    public var trackID: String
    public var extensions: RTPExtensionIDs
    /// The RFC 4588 retransmission stream offered with video: its SSRC (FID group) and
    /// payload type (`apt` = the codec's). Used once the subscriber's answer accepts it.
    public var rtxSSRC: UInt32?
    public var rtxPayloadType: UInt8?
}
