import Media

/// What a video session pushes to one participant's connection (docs/protocol.md, "Video sessions").
public enum VideoPush: Sendable, Equatable {
    case connectionCreated(VideoHub.Connection)
    case connectionDestroyed(VideoHub.Connection, reason: VideoHub.DisconnectReason)
    case streamCreated(VideoHub.Stream)
    case streamDestroyed(VideoHub.Stream, reason: VideoHub.DisconnectReason)
    case streamPropertyChanged(VideoHub.Stream, property: VideoHub.StreamProperty, newValue: Bool)
    /// To the publisher whose audio a moderator (or the server API) turned off.
    case muteForced(streamID: String)
    /// `from` is the sending connection; nil for a signal from the server API.
    case signal(type: String, data: String, from: String?)
    /// To a simulcast publisher: the sizes of its stream (by rid) no subscriber or recorder takes now, which it may stop
    /// sending until a later one leaves them out (empty: send every size).
    case unusedLayers(streamID: String, rids: [String])
    /// To a subscriber: its audio fallback warned of its link, lifted the warning, turned the stream's video off or on.
    case audioFallback(streamID: String, AudioFallbackChange)
    /// To a publisher: its audio fallback warned of its link, lifted the warning, turned its video off or on (nil: a
    /// silent try of the video, or the end of one), and whether it should send its video now.
    case publisherAudioFallback(streamID: String, AudioFallbackChange?, sendVideo: Bool)
    /// A caption of a stream's audio, to a connection that asked for them (live captions).
    case captionReceived(streamID: String, caption: String, isFinal: Bool)
    /// In a relayed session, one end of a subscription to the other (`VideoHub.relay`).
    case relay(streamID: String, subscriberID: String, VideoHub.RelayMessage)
    /// To a connection that was disconnected by force.
    case sessionDisconnected(reason: VideoHub.DisconnectReason)
}
