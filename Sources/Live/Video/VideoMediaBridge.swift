import Media

/// Media for video streams: publish answers an SDP offer, subscribe offers and takes the answer.
/// `EngineVideoMediaBridge` implements it on the SFU; tests may put a fake in its place.
public protocol VideoMediaBridge: Sendable {
    func publish(sessionID: String, streamID: String, offer: String) async throws(MediaError) -> String
    func subscribe(sessionID: String, streamID: String, subscriberID: String) async throws(MediaError) -> String
    func completeSubscription(sessionID: String, streamID: String, subscriberID: String, answer: String) async throws(MediaError)
    func unpublish(sessionID: String, streamID: String) async
    func unsubscribe(sessionID: String, streamID: String, subscriberID: String) async
    /// What a subscriber would like of a stream: a picture size of a simulcast one, a frame rate of one sent in
    /// temporal layers.
    func setPreferences(sessionID: String, streamID: String, subscriberID: String, _ preferences: SubscriberPreferences) async throws(MediaError)
    func setAudioMuted(sessionID: String, streamID: String, muted: Bool) async
    /// A published stream's audio fallbacks (the Video API's `audioFallback: {publisher, subscriber}`): whether its
    /// publisher's own link is judged, and whether its subscribers' links are.
    func setAudioFallback(sessionID: String, streamID: String, _ fallback: AudioFallbackSettings) async
    /// A connection left: drop everything it subscribed to (and its audio connector's mix).
    func connectionClosed(sessionID: String, connectionID: String) async
    /// The audio connector of `connectionID`: the audio of `streams` (every stream, later ones too, when nil)
    /// mixed into the port `make` builds on the session's media worker, until the connection closes. With a
    /// `voice` stream id, what the port says is that stream's audio, which subscribers then take like any other.
    func connectAudio(sessionID: String, connectionID: String, streams: Set<String>?, voice: String?,
                      make: @escaping MixerPortFactory) async throws(MediaError)
    /// Keeps the session's audio mix (every stream's audio, later ones too) for `holder`, an archive's
    /// recording, until `releaseMix`; returns the mix. With `hearing`, the holder also gets a participant of
    /// the mix that hears only those streams (`setMixHearing` changes them), for a recorder to tap.
    func holdMix(sessionID: String, holder: String, hearing: Set<String>?) async throws(MediaError) -> HeldMix
    /// The streams a holder's participant hears (a stream published later included once it is).
    func setMixHearing(sessionID: String, holder: String, streams: Set<String>) async throws(MediaError)
    func releaseMix(sessionID: String, holder: String) async
    /// Starts copying a published stream's packets for a recorder (an individual-stream archive): a tap on
    /// each of its producers of `kinds`; empty when the stream has no media (yet).
    func tapStream(sessionID: String, streamID: String, tap: ProducerTapID, kinds: Set<MediaKind>) async throws(MediaError) -> [StreamTap]
    /// What a tap captured since the last drain; `notFound` once the stream's media is gone.
    func drain(_ tap: StreamTap) async throws(MediaError) -> ProducerTapPackets
    func requestKeyframe(_ tap: StreamTap) async
    func untap(_ tap: StreamTap) async
    /// The session and stream a producer of the engine's carries.
    func stream(of producer: ProducerID) -> (sessionID: String, streamID: String)?
    /// The session, stream and subscriber (connection id) a consumer of the engine's sends to.
    func subscription(of consumer: ConsumerID) -> (sessionID: String, streamID: String, subscriberID: String)?
}

/// A session's audio mix held for a recorder: what it records is the mix as everyone hears it, or, with a
/// `listener`, what that participant hears.
public struct HeldMix: Sendable, Hashable {
    public var mixer: MixerID
    public var listener: MixerParticipantID?

    public init(mixer: MixerID, listener: MixerParticipantID?) {
        self.mixer = mixer
        self.listener = listener
    }
}

/// A subscriber's preferences for a stream; nil leaves one as it was.
public struct SubscriberPreferences: Sendable, Hashable {
    /// The picture size it would like (0 × 0: the largest the publisher sends).
    public var width: Int?
    public var height: Int?
    /// Frames per second it would like (0: every frame the publisher sends).
    public var frameRate: Double?
    /// Whether it takes the stream's audio and its video (OpenTok's `subscribeToAudio`, `subscribeToVideo`): one it
    /// does not is paused at the server, sending it nothing.
    public var audio: Bool?
    public var video: Bool?
    /// Whether the video is turned off while its link loses too much of it (the Video API's subscriber audio
    /// fallback; on unless turned off).
    public var audioFallback: Bool?

    public init(width: Int? = nil, height: Int? = nil, frameRate: Double? = nil, audio: Bool? = nil, video: Bool? = nil, audioFallback: Bool? = nil) {
        self.width = width
        self.height = height
        self.frameRate = frameRate
        self.audio = audio
        self.video = video
        self.audioFallback = audioFallback
    }

    public var isEmpty: Bool { width == nil && height == nil && frameRate == nil && audio == nil && video == nil && audioFallback == nil }
}

/// Which audio fallbacks a published stream has: of its publisher's own link (off unless asked for, as in the Video
/// API) and of each subscriber's (on unless turned off).
public struct AudioFallbackSettings: Sendable, Hashable {
    public var publisher: Bool
    public var subscriber: Bool

    public init(publisher: Bool = false, subscriber: Bool = true) {
        self.publisher = publisher
        self.subscriber = subscriber
    }
}

/// A recorder's tap on one producer of a stream.
public struct StreamTap: Sendable, Hashable {
    public var producer: ProducerID
    public var kind: MediaKind
    public var id: ProducerTapID
}

extension VideoMediaBridge {
    public func setPreferences(sessionID: String, streamID: String, subscriberID: String, _ preferences: SubscriberPreferences) async throws(MediaError) {}
    public func connectionClosed(sessionID: String, connectionID: String) async {}
    public func setAudioFallback(sessionID: String, streamID: String, _ fallback: AudioFallbackSettings) async {}
    public func connectAudio(sessionID: String, connectionID: String, streams: Set<String>?, voice: String?,
                             make: @escaping MixerPortFactory) async throws(MediaError) {
        throw .unsupported("audio connectors need the media engine")
    }
    public func holdMix(sessionID: String, holder: String, hearing: Set<String>?) async throws(MediaError) -> HeldMix {
        throw .unsupported("archives need the media engine")
    }
    public func setMixHearing(sessionID: String, holder: String, streams: Set<String>) async throws(MediaError) {
        throw .unsupported("archives need the media engine")
    }
    public func releaseMix(sessionID: String, holder: String) async {}
    public func tapStream(sessionID: String, streamID: String, tap: ProducerTapID, kinds: Set<MediaKind>) async throws(MediaError) -> [StreamTap] {
        throw .unsupported("archives need the media engine")
    }
    public func drain(_ tap: StreamTap) async throws(MediaError) -> ProducerTapPackets {
        throw .unsupported("archives need the media engine")
    }
    public func requestKeyframe(_ tap: StreamTap) async {}
    public func untap(_ tap: StreamTap) async {}
    public func stream(of producer: ProducerID) -> (sessionID: String, streamID: String)? { nil }
    public func subscription(of consumer: ConsumerID) -> (sessionID: String, streamID: String, subscriberID: String)? { nil }
}
