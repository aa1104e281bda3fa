import Wire

/// A client connected to a video session: `{connectionId, creationTime, data}`.
public struct VideoConnection: Sendable, Hashable {
    public var id: String
    /// The token's connection data, e.g. `name=alice`.
    public var data: String
    public var creationTime: Int

    init?(json: JSONValue?) {
        guard let json, let id = json["connectionId"]?.stringValue else { return nil }
        self.id = id
        data = json["data"]?.stringValue ?? ""
        creationTime = json["creationTime"]?.intValue ?? 0
    }
}

/// A published stream: `{streamId, connectionId, name, hasAudio, hasVideo, videoType}`.
public struct VideoStream: Sendable, Hashable {
    public var id: String
    public var connectionID: String
    public var name: String
    public var hasAudio: Bool
    public var hasVideo: Bool
    public var videoType: String

    init?(json: JSONValue?) {
        guard let json, let id = json["streamId"]?.stringValue else { return nil }
        self.id = id
        connectionID = json["connectionId"]?.stringValue ?? ""
        name = json["name"]?.stringValue ?? ""
        hasAudio = json["hasAudio"]?.boolValue ?? false
        hasVideo = json["hasVideo"]?.boolValue ?? false
        videoType = json["videoType"]?.stringValue ?? "camera"
    }
}

/// A stream's newest caption: the words so far of what is being said, then (`isFinal`) the utterance's text.
public struct VideoCaption: Sendable, Hashable {
    public var text: String
    public var isFinal: Bool

    public init(text: String, isFinal: Bool) {
        self.text = text
        self.isFinal = isFinal
    }
}

/// What happens in a video session, in order.
public enum VideoEvent: Sendable, Hashable {
    case connected(connectionID: String)
    case connectionCreated(VideoConnection)
    case connectionDestroyed(VideoConnection, reason: String)
    case streamCreated(VideoStream)
    case streamDestroyed(VideoStream, reason: String)
    case streamPropertyChanged(VideoStream, property: String, newValue: Bool)
    case signal(type: String, data: String, from: String?)
    case muteForced(streamID: String)
    /// A caption of a stream whose captions this client asked for: partial ones as the words are
    /// said, then a final one (`isFinal`) for each utterance.
    case captionReceived(streamID: String, caption: String, isFinal: Bool)
    /// A subscribed stream's audio fallback: the server warned that this client's link loses too much of the video,
    /// lifted the warning, turned the video off (audio only) or on again.
    case audioFallback(streamID: String, AudioFallbackEvent)
    /// One of this client's streams published with `audioFallback`: the server warned that this client's own link
    /// loses too much of its video, lifted the warning, stopped the video (audio only) or found it carried again
    /// (nil: a silent try of the video, or the end of one); `sendVideo` is whether its video is being sent now (the
    /// session's own publisher follows it).
    case publisherAudioFallback(streamID: String, AudioFallbackEvent?, sendVideo: Bool)
    /// One of this client's simulcast streams: the sizes (RIDs) no subscriber takes now, which the session's own
    /// publisher pauses until a later one leaves them out (empty: every size is taken).
    case unusedLayers(streamID: String, rids: [String])
    /// In a relayed session, from the other end of a subscription (`subscriberID` is the subscriber's connection):
    /// for an app whose own WebRTC stack connects peer to peer (`VideoSession.publishRelayed`, `subscribeRelayed`, `relay`).
    case relay(streamID: String, subscriberID: String, VideoRelayMessage)
    /// The socket dropped; the client is connecting again (its streams are gone meanwhile).
    case reconnecting
    /// Connected again as `connectionID`, streams published and subscriptions made again.
    case reconnected(connectionID: String)
    /// The server ended this client's connection (`forceDisconnected`, …), or the socket closed and
    /// reconnecting failed or was off (`networkDisconnected`).
    case disconnected(reason: String)
    case error(SessionError)

    init?(push message: JSONValue) {
        let body = message["body"] ?? .null
        let reason = body["reason"]?.stringValue ?? ""
        switch message["type"]?.stringValue {
        case "video:connectionCreated":
            guard let c = VideoConnection(json: body["connection"]) else { return nil }
            self = .connectionCreated(c)
        case "video:connectionDestroyed":
            guard let c = VideoConnection(json: body["connection"]) else { return nil }
            self = .connectionDestroyed(c, reason: reason)
        case "video:streamCreated":
            guard let s = VideoStream(json: body["stream"]) else { return nil }
            self = .streamCreated(s)
        case "video:streamDestroyed":
            guard let s = VideoStream(json: body["stream"]) else { return nil }
            self = .streamDestroyed(s, reason: reason)
        case "video:streamPropertyChanged":
            guard let s = VideoStream(json: body["stream"]) else { return nil }
            self = .streamPropertyChanged(s, property: body["property"]?.stringValue ?? "", newValue: body["newValue"]?.boolValue ?? false)
        case "video:signal":
            self = .signal(type: body["type"]?.stringValue ?? "", data: body["data"]?.stringValue ?? "", from: body["from"]?.stringValue)
        case "video:muteForced":
            self = .muteForced(streamID: body["streamId"]?.stringValue ?? "")
        case "video:captionReceived":
            guard let streamID = body["streamId"]?.stringValue, let caption = body["caption"]?.stringValue else { return nil }
            self = .captionReceived(streamID: streamID, caption: caption, isFinal: body["isFinal"]?.boolValue ?? false)
        case "video:videoDisableWarning", "video:videoDisableWarningLifted", "video:videoDisabled", "video:videoEnabled":
            guard let streamID = body["streamId"]?.stringValue,
                  let event = AudioFallbackEvent(rawValue: String(message["type"]?.stringValue?.dropFirst("video:".count) ?? "")) else { return nil }
            self = .audioFallback(streamID: streamID, event)
        case "video:publisherAudioFallback":
            guard let streamID = body["streamId"]?.stringValue, let sendVideo = body["sendVideo"]?.boolValue else { return nil }
            self = .publisherAudioFallback(streamID: streamID, body["event"]?.stringValue.flatMap(AudioFallbackEvent.init(rawValue:)),
                                           sendVideo: sendVideo)
        case "video:unusedLayers":
            guard let streamID = body["streamId"]?.stringValue, case .array(let list)? = body["rids"] else { return nil }
            self = .unusedLayers(streamID: streamID, rids: list.compactMap(\.stringValue))
        case "video:relay":
            guard let streamID = body["streamId"]?.stringValue, let subscriberID = body["subscriberId"]?.stringValue else { return nil }
            let message: VideoRelayMessage
            switch body["event"]?.stringValue {
            case "subscribe": message = .subscribe
            case "end": message = .end
            case "description":
                guard let type = body["description"]?["type"]?.stringValue, let sdp = body["description"]?["sdp"]?.stringValue else { return nil }
                message = .description(type: type, sdp: sdp)
            case "candidate":
                guard let c = body["candidate"], let candidate = c["candidate"]?.stringValue else { return nil }
                message = .candidate(ICECandidate(candidate: candidate, sdpMid: c["sdpMid"]?.stringValue, sdpMLineIndex: c["sdpMLineIndex"]?.intValue))
            default: return nil
            }
            self = .relay(streamID: streamID, subscriberID: subscriberID, message)
        case "video:sessionDisconnected":
            self = .disconnected(reason: reason)
        default:
            return nil
        }
    }
}

/// The Video API's audio fallback events (their names as its client SDKs give them).
public enum AudioFallbackEvent: String, Sendable, Hashable {
    case videoDisableWarning, videoDisableWarningLifted, videoDisabled, videoEnabled
}

/// What the two ends of a relayed subscription pass to each other (docs/protocol.md, "Relayed sessions").
public enum VideoRelayMessage: Sendable, Hashable {
    /// To a publisher: a connection subscribed to its stream; make it a peer connection and offer.
    case subscribe
    /// An SDP offer, answer, pranswer or rollback.
    case description(type: String, sdp: String)
    /// A trickled ICE candidate (an empty `candidate` ends gathering).
    case candidate(ICECandidate)
    /// To a publisher: the subscriber unsubscribed or left; close its peer connection.
    case end
}

/// An ICE candidate as `RTCIceCandidateInit` writes it.
public struct ICECandidate: Sendable, Hashable {
    public var candidate: String
    public var sdpMid: String?
    public var sdpMLineIndex: Int?
    public init(candidate: String, sdpMid: String? = nil, sdpMLineIndex: Int? = nil) {
        self.candidate = candidate
        self.sdpMid = sdpMid
        self.sdpMLineIndex = sdpMLineIndex
    }
}

/// A STUN or TURN server as `RTCIceServer` writes it: what the server gives each client for its peer connections
/// (`--ice-servers`), a TURN server's with a credential made for this client.
public struct ICEServer: Sendable, Equatable {
    public var urls: [String]
    public var username: String?
    public var credential: String?

    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }

    /// The servers of a reply's `iceServers` (or `ice_servers`) list.
    static func list(_ json: JSONValue?) -> [ICEServer] {
        (json?.arrayValue ?? []).compactMap { s in
            guard let urls = s["urls"]?.arrayValue?.compactMap(\.stringValue), !urls.isEmpty else { return nil }
            return ICEServer(urls: urls, username: s["username"]?.stringValue, credential: s["credential"]?.stringValue)
        }
    }
}

/// Which candidates a client's media may use, as WebRTC's `iceTransportPolicy` says it.
public enum ICETransportPolicy: Sendable, Equatable {
    /// Its own addresses, and a relayed address on the first TURN server over UDP among the ICE servers when there is
    /// one (the default): the first pair that answers carries the media.
    case all
    /// Only a TURN server's relayed address: everything goes through the TURN server.
    case relay
}
