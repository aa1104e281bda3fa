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
        case "video:sessionDisconnected":
            self = .disconnected(reason: reason)
        default:
            return nil
        }
    }
}
