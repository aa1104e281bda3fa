import Foundation
import Live
import Platform
import Runtime
import VideoCodec
import Wire

/// Session monitoring: what happens in a video session (it starts and ends, clients connect and
/// disconnect, streams are published and end) is POSTed as JSON to the URLs the session's application
/// gives in `capabilities.video.webhooks` (`session_created`, `session_destroyed`, `connection_created`,
/// `connection_destroyed`, `stream_created`, `stream_destroyed`, each `{address, active?}`), in the Video
/// API's callback shape. One ordered lane per session, bounded, retried, signed like the application's
/// other webhooks (`VoiceWebhooks`' event lanes); nothing waits for them.
struct VideoMonitor: Sendable {
    let core: PlatformCore
    let hooks: VoiceWebhooks

    func handle(_ event: VideoHub.SessionEvent) {
        let (sessionID, name, fields) = Self.callback(event)
        guard let project = VideoSessions.owner(ofSessionID: sessionID), let (app, address) = webhook(name, project: project) else { return }
        let payload: [(String, JSONValue)] = [("sessionId", .string(sessionID)), ("projectId", .string(project))] + fields
        hooks.event(payload, to: VoiceWebhooks.Target(url: address), application: app, lane: sessionID)
    }

    /// The project's application and the address of its active `name` webhook, if it has one.
    private func webhook(_ name: String, project: String) -> (Application, String)? {
        guard let app = try? core.applications.get(id: project),
              let hook = app.capabilities["video"]?["webhooks"]?[name], hook["active"]?.boolValue != false,
              let address = hook["address"]?.stringValue, !address.isEmpty else { return nil }
        return (app, address)
    }

    /// An archive's status changed: the application's `archive_status` webhook gets the archive object.
    func archiveChanged(_ archive: VideoArchives.Archive) {
        guard let (app, address) = webhook("archive_status", project: archive.projectID) else { return }
        let payload: [(String, JSONValue)] = [
            ("id", .string(archive.id)), ("status", .string(archive.status.rawValue)), ("name", .string(archive.name)),
            ("reason", .string(archive.reason)), ("sessionId", .string(archive.sessionID)), ("projectId", .string(archive.projectID)),
            ("createdAt", .number(Double(archive.createdAt))), ("updatedAt", .number(Double(archive.updatedAt))),
            ("size", .number(Double(archive.size))), ("duration", .number(Double(archive.duration))), ("outputMode", .string(archive.outputMode ?? "composed")),
            ("hasAudio", .bool(archive.hasAudio ?? true)), ("hasVideo", .bool(archive.hasVideo ?? false)),
            ("streamMode", .string(archive.manual ? "manual" : "auto")), ("event", "archive"),
        ]
        hooks.event(payload, to: VoiceWebhooks.Target(url: address), application: app, lane: archive.sessionID)
    }

    /// A broadcast started or stopped, or one of its outputs' statuses changed: the application's `broadcast_status`
    /// webhook gets the broadcast object, as `GET …/broadcast/{id}` would answer then, with `event: broadcast`.
    func broadcastChanged(_ broadcast: VideoBroadcasts.Broadcast, statuses: [MediaWriter.OutputStatus]?, hlsURL: String) {
        guard let (app, address) = webhook("broadcast_status", project: broadcast.projectID),
              let data = try? JSONSerialization.data(withJSONObject: broadcast.json(hlsURL: hlsURL, statuses: statuses)),
              let object = (try? JSONParser.parse(Array(data)))?.objectValue else { return }
        let payload = object.sorted { $0.key < $1.key }.map { ($0.key, $0.value) } + [("event", "broadcast")]
        hooks.event(payload, to: VoiceWebhooks.Target(url: address), application: app, lane: broadcast.sessionID)
    }

    /// Live captions started, stopped or failed: the start's `statusCallbackUrl` (signed like the application's
    /// webhooks when the session is an application's) and the application's `captions_status` webhook get it.
    func captionsChanged(_ captions: VideoCaptions.Captions) {
        let app = try? core.applications.get(id: captions.projectID)
        var payload: [(String, JSONValue)] = [
            ("captionId", .string(captions.id)), ("applicationId", .string(captions.projectID)), ("sessionId", .string(captions.sessionID)),
            ("status", .string(captions.status.rawValue)), ("createdAt", .number(Double(captions.createdAt))),
            ("updatedAt", .number(Double(captions.updatedAt))), ("duration", .number(Double((captions.updatedAt - captions.createdAt) / 1000))),
            ("languageCode", .string(captions.languageCode)), ("provider", "pocketsphinx"),
        ]
        if !captions.reason.isEmpty { payload.append(("reason", .string(captions.reason))) }
        if let url = captions.statusCallbackURL {
            hooks.event(payload, to: VoiceWebhooks.Target(url: url), application: app, lane: captions.sessionID)
        }
        if let (app, address) = webhook("captions_status", project: captions.projectID) {
            hooks.event(payload, to: VoiceWebhooks.Target(url: address), application: app, lane: captions.sessionID)
        }
    }

    /// The session, the webhook's name and the callback's fields after `sessionId` and `projectId`.
    static func callback(_ event: VideoHub.SessionEvent) -> (String, String, [(String, JSONValue)]) {
        let now = JSONValue.number((Date().timeIntervalSince1970 * 1000).rounded())
        func millis(_ d: Date) -> JSONValue { .number((d.timeIntervalSince1970 * 1000).rounded()) }
        func connection(_ c: VideoHub.Connection) -> JSONValue {
            ["id": .string(c.id), "createdAt": millis(c.createdAt), "data": .string(c.grant.connectionData ?? "")]
        }
        func stream(_ s: VideoHub.Stream, _ c: VideoHub.Connection?) -> JSONValue {
            var o: [String: JSONValue] = ["id": .string(s.id), "createdAt": millis(s.createdAt), "name": .string(s.name),
                                          "videoType": .string(s.videoType.rawValue)]
            if let c { o["connection"] = connection(c) }
            return .object(o)
        }
        switch event {
        case .sessionCreated(let sid):
            return (sid, "session_created", [("event", "sessionCreated"), ("timestamp", now)])
        case .sessionDestroyed(let sid, let reason):
            return (sid, "session_destroyed", [("event", "sessionDestroyed"), ("reason", .string(reason.rawValue)), ("timestamp", now)])
        case .connectionCreated(let c):
            return (c.sessionID, "connection_created", [("event", "connectionCreated"), ("timestamp", now), ("connection", connection(c))])
        case .connectionDestroyed(let c, let reason):
            return (c.sessionID, "connection_destroyed", [("event", "connectionDestroyed"), ("reason", .string(reason.rawValue)),
                                                          ("timestamp", now), ("connection", connection(c))])
        case .streamCreated(let s, let c):
            return (c.sessionID, "stream_created", [("event", "streamCreated"), ("timestamp", now), ("stream", stream(s, c))])
        case .streamDestroyed(let s, let sid, let c, let reason):
            return (sid, "stream_destroyed", [("event", "streamDestroyed"), ("reason", .string(reason.rawValue)),
                                                             ("timestamp", now), ("stream", stream(s, c))])
        }
    }
}
