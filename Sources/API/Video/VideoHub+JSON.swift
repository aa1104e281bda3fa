import Foundation
import Live
import Media
import Wire

extension VideoHub.Connection {
    /// `{connectionId, creationTime (ms), data}`.
    var json: JSONValue {
        ["connectionId": .string(id), "creationTime": .number(Double(Int(createdAt.timeIntervalSince1970 * 1000))),
         "data": .string(grant.connectionData ?? "")]
    }
}

extension VideoHub.Stream {
    /// `{streamId, connectionId, name, hasAudio, hasVideo, videoType, creationTime (ms)}`.
    var json: JSONValue {
        ["streamId": .string(id), "connectionId": .string(connectionID), "name": .string(name), "hasAudio": .bool(hasAudio),
         "hasVideo": .bool(hasVideo), "videoType": .string(videoType.rawValue),
         "creationTime": .number(Double(Int(createdAt.timeIntervalSince1970 * 1000)))]
    }

    /// The REST shape of `/stream`.
    var restJSON: [String: Any] { ["id": id, "videoType": videoType.rawValue, "name": name, "layoutClassList": layoutClassList] }
}

extension VideoHub.VideoType {
    /// `videoType` of a publish request: `screen`, or a camera whatever else it says.
    init(wire: String?) { self = wire == "screen" ? .screen : .camera }
}

extension VideoPush {
    /// The realtime message (docs/protocol.md, "Video sessions").
    var message: (type: String, body: JSONValue) {
        switch self {
        case .connectionCreated(let c):
            return ("video:connectionCreated", ["connection": c.json])
        case .connectionDestroyed(let c, let reason):
            return ("video:connectionDestroyed", ["connection": c.json, "reason": .string(reason.rawValue)])
        case .streamCreated(let stream):
            return ("video:streamCreated", ["stream": stream.json])
        case .streamDestroyed(let stream, let reason):
            return ("video:streamDestroyed", ["stream": stream.json, "reason": .string(reason.rawValue)])
        case .streamPropertyChanged(let stream, let property, let value):
            return ("video:streamPropertyChanged", ["stream": stream.json, "property": .string(property.rawValue), "newValue": .bool(value)])
        case .muteForced(let streamID):
            return ("video:muteForced", ["streamId": .string(streamID)])
        case .signal(let type, let data, let from):
            var body: [String: JSONValue] = ["type": .string(type), "data": .string(data)]
            if let from { body["from"] = .string(from) }
            return ("video:signal", .object(body))
        case .audioFallback(let streamID, let change):
            var body: [String: JSONValue] = ["streamId": .string(streamID)]
            if change == .videoDisabled || change == .videoEnabled { body["reason"] = .string("quality") }
            return ("video:" + change.rawValue, .object(body))
        case .publisherAudioFallback(let streamID, let change, let sendVideo):
            var body: [String: JSONValue] = ["streamId": .string(streamID), "sendVideo": .bool(sendVideo)]
            if let change {
                body["event"] = .string(change.rawValue)
                if change == .videoDisabled || change == .videoEnabled { body["reason"] = .string("quality") }
            }
            return ("video:publisherAudioFallback", .object(body))
        case .unusedLayers(let streamID, let rids):
            return ("video:unusedLayers", ["streamId": .string(streamID), "rids": .array(rids.map { .string($0) })])
        case .captionReceived(let streamID, let caption, let isFinal):
            return ("video:captionReceived", ["streamId": .string(streamID), "caption": .string(caption), "isFinal": .bool(isFinal)])
        case .relay(let streamID, let subscriberID, let message):
            var body: [String: JSONValue] = ["streamId": .string(streamID), "subscriberId": .string(subscriberID)]
            switch message {
            case .subscribe: body["event"] = "subscribe"
            case .end: body["event"] = "end"
            case .description(let type, let sdp):
                body["event"] = "description"
                body["description"] = ["type": .string(type), "sdp": .string(sdp)]
            case .candidate(let candidate, let mid, let index):
                body["event"] = "candidate"
                var c: [String: JSONValue] = ["candidate": .string(candidate)]
                if let mid { c["sdpMid"] = .string(mid) }
                if let index { c["sdpMLineIndex"] = .number(Double(index)) }
                body["candidate"] = .object(c)
            }
            return ("video:relay", .object(body))
        case .sessionDisconnected(let reason):
            return ("video:sessionDisconnected", ["reason": .string(reason.rawValue)])
        }
    }
}
