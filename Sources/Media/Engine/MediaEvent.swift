/// Connection state of a WebRTC transport as the control plane sees it.
public enum TransportState: String, Sendable, Hashable, Codable {
    case new
    /// ICE selected a path; DTLS is running.
    case connecting
    /// DTLS done, SRTP keyed: media flows.
    case connected
    /// ICE consent expired or DTLS failed.
    case failed
    case closed
}

/// Something a worker tells the control plane; delivered on the worker thread, so the
/// handler must only hand it on (to an actor, a channel), never block.
public enum MediaEvent: Sendable, Hashable {
    case transportState(TransportID, TransportState)
    /// The loudest producer of a room changed (nil: silence), from RFC 6464 levels.
    case activeSpeaker(RouterID, ProducerID?)
    /// Every audio producer's loudness over the last interval (about 300 ms), for
    /// per-member speaking indicators and loudest-N forwarding.
    case audioLevels(RouterID, [AudioLevel])
    /// A mixer participant started or stopped speaking (from the decoded signal).
    case mixerSpeaking(MixerID, MixerParticipantID, Bool)
    /// A mixer participant's queued audio played to its end; it has left the mixer.
    case mixerInputFinished(MixerID, MixerParticipantID)
    /// The layers of a simulcast track (its producer) that no subscriber or recorder takes now, by rid, which its
    /// publisher may stop sending; empty: every layer is wanted again. Sent when it changes.
    case unusedLayers(ProducerID, rids: [String])
    /// A video consumer's audio fallback warned of its subscriber's link, lifted the warning, turned the video off
    /// or on again (`MediaEngine.setAudioFallback`).
    case audioFallback(ConsumerID, AudioFallbackChange)
    /// A video track's publisher audio fallback (`MediaEngine.setPublisherAudioFallback`) moved: what its publisher
    /// is told (nil: nothing, a silent try of the video or the end of one), and whether it should send the video now.
    case publisherAudioFallback(ProducerID, AudioFallbackChange?, sendVideo: Bool)
}

/// What a subscriber (or a publisher) is told of its audio fallback (the Video API's events of the same names).
public enum AudioFallbackChange: String, Sendable, Hashable {
    case videoDisableWarning, videoDisableWarningLifted, videoDisabled, videoEnabled
}

/// One audio producer's loudness over an interval, from its RFC 6464 levels
/// (0 silent ... 127 loudest, i.e. 127 + dBov).
public struct AudioLevel: Sendable, Hashable {
    public var producer: ProducerID
    /// Mean over the interval's packets.
    public var mean: Int
    /// The loudest packet of the interval (short sounds between silences still show).
    public var peak: Int
    public init(producer: ProducerID, mean: Int, peak: Int) {
        self.producer = producer
        self.mean = mean
        self.peak = peak
    }
}

/// Counters of one RTP stream (`getStats`-like, RFC 3550 §6.4 semantics).
public struct StreamStats: Sendable, Hashable, Codable {
    public var ssrc: UInt32
    public var kind: MediaKind
    public var packets: UInt64 = 0
    public var bytes: UInt64 = 0
    /// Packets lost (receive side: gaps seen; send side: as the subscriber reports).
    public var packetsLost: Int64 = 0
    /// Interarrival jitter in seconds.
    public var jitter: Double = 0
    /// Round-trip time in seconds from RTCP (0 until measured).
    public var roundTripTime: Double = 0
    public var nacks: UInt64 = 0
    public var retransmitted: UInt64 = 0
    public var keyframeRequests: UInt64 = 0
    public var paused = false
    /// Simulcast: the RTP stream id of the layer received (producer) or being sent (consumer).
    public var rid: String?
    /// The picture size of the layer's newest key frame (VP8).
    public var frameWidth: Int?
    public var frameHeight: Int?
    /// Bits per second received (producer), over about the last second.
    public var bitrate: UInt64?

    public init(ssrc: UInt32, kind: MediaKind) {
        self.ssrc = ssrc
        self.kind = kind
    }
}

/// Snapshot of one transport.
public struct TransportStats: Sendable, Hashable, Codable {
    public var id: TransportID
    public var state: TransportState
    public var selectedAddress: String?
    /// The SRTP protection profile DTLS negotiated (RFC 5764 §4.1.2 name), once connected.
    public var srtpProfile: String?
    /// RTCP transport-wide CC feedback packets sent to the publisher (bandwidth estimation).
    public var transportFeedbackSent: UInt64 = 0
    /// The subscriber's latest receive-side bandwidth estimate (REMB), bits per second.
    public var receiverEstimate: UInt64?
    public var producers: [String: StreamStats]
    public var consumers: [String: StreamStats]
}
