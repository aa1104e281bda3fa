import Crypto
import Foundation
import Live
import Platform
import Runtime
import Wire

/// The Video (OpenTok) REST API: `/session/create` and `/v2/project/{id}/session/{sid}/…`.
/// Server credentials: `X-OPENTOK-AUTH` (HS256 JWT signed with the api secret, `ist: project`) or a
/// Bearer application JWT (then `{id}` is the application id). A session belongs to the project that
/// created it; every route that takes a session id reaches it through `session(_:core:)`.
struct VideoRoutes {
    let core: PlatformCore
    let hub: VideoHub
    /// The loops the Audio Connector's WebSocket clients run on.
    let group: EventLoopGroup
    /// The SIP edge for SIP interconnect (`/dial`); nil when the server runs none.
    var sip: VideoSIPEdge? = nil
    /// Archives and broadcasts; nil without a media engine.
    var archives: VideoArchives? = nil
    var broadcasts: VideoBroadcasts? = nil
    /// Live captions; nil without a media engine.
    var captions: VideoCaptions? = nil
    /// Experience Composers; nil without a media engine.
    var renders: VideoRenders? = nil

    func register(on router: inout Router) {
        let core = self.core
        let hub = self.hub

        router.post("/session/create") { req in
            let (account, owner) = try Self.projectCredentials(req, core: core, project: nil)
            // Form-encoded per the API; some SDKs send a JSON Content-Type with a form body, so read both.
            var fields = req.form
            if fields.isEmpty, case .object(let o)? = try? req.json() { fields = o.compactMapValues { $0.stringValue } }
            let media = fields["p2p.preference"] == "enabled" ? "relayed" : "routed"
            let archive = fields["archiveMode"] ?? "manual"
            guard ["manual", "always"].contains(archive) else { throw APIError.badRequest("archiveMode must be manual or always.") }
            // Archived automatically: routed, with the name and resolution its archives get.
            let name = fields["archiveName"], resolution = fields["archiveResolution"]
            if archive == "always" {
                guard media == "routed" else { throw APIError.badRequest("archiveMode always needs routed media (p2p.preference disabled).") }
                if let name, !(1...80).contains(name.count) { throw APIError.badRequest("archiveName must be 1 to 80 characters.") }
                if let resolution, !ArchiveCanvas.resolutions.contains(resolution) {
                    throw APIError.badRequest("archiveResolution must be one of \(ArchiveCanvas.resolutions.joined(separator: ", ")).")
                }
            } else if name != nil || resolution != nil {
                throw APIError.badRequest("archiveName and archiveResolution are for archiveMode always.")
            }
            // End-to-end encryption is the clients' (they encrypt their media with a shared secret); claiming a
            // session has it when this server's clients do not would mislead.
            if fields["e2ee"]?.lowercased() == "true" {
                throw APIError.badRequest("e2ee: end-to-end encrypted sessions are not offered here.", code: "unsupported-option")
            }
            let location = fields["location"].flatMap { $0.isEmpty ? nil : $0 }
            let s = try core.videoSessions.create(owner: owner, apiKey: account.apiKey, mediaMode: media, archiveMode: archive, archiveName: name,
                                                  archiveResolution: resolution, location: location)
            let body: [[String: Any]] = [[
                "session_id": s.id, "project_id": owner, "partner_id": owner, "create_dt": Self.httpDate(s.createdAt),
                "session_status": NSNull(), "status_invalid": NSNull(), "media_server_hostname": NSNull(), "messaging_server_url": NSNull(),
                "messaging_url": NSNull(), "symphony_address": NSNull(), "properties": NSNull(), "ice_server": NSNull(),
                "session_segment_id": UUID4.generate(), "ice_servers": NSNull(), "ice_credential_expiration": 86100,
                "media_server_url": "",
            ]]
            var r = HTTPResponse.jsonObject(body)
            r.headers["Content-Type"] = "application/json"
            return r
        }
        router.post("/v2/project/:pid/session/:sid/signal") { req in
            let s = try Self.session(req, core: core)
            let (type, data) = try Self.signalBody(req)
            hub.signal(sessionID: s.id, to: nil, from: nil, type: type, data: data)
            return .noContent()
        }
        router.post("/v2/project/:pid/session/:sid/connection/:cid/signal") { req in
            let s = try Self.session(req, core: core)
            let (type, data) = try Self.signalBody(req)
            guard hub.signal(sessionID: s.id, to: req.parameter("cid"), from: nil, type: type, data: data) else {
                throw APIError.notFound("The connection is not in this session.")
            }
            return .noContent()
        }
        router.delete("/v2/project/:pid/session/:sid/connection/:cid") { req in
            let s = try Self.session(req, core: core)
            guard hub.disconnect(sessionID: s.id, connectionID: req.parameter("cid"), reason: .forceDisconnected) else {
                throw APIError.notFound("The connection is not in this session.")
            }
            return .noContent()
        }
        router.get("/v2/project/:pid/session/:sid/stream") { req in
            let s = try Self.session(req, core: core)
            return Self.streamList(hub.streams(sessionID: s.id))
        }
        router.put("/v2/project/:pid/session/:sid/stream") { req in
            let s = try Self.session(req, core: core)
            switch hub.setLayoutClassLists(sessionID: s.id, try Self.layoutClassLists(req)) {
            case .success(let streams):
                return Self.streamList(streams)
            case .failure(let unknown):
                throw APIError.notFound("Not in this session: stream \(unknown.ids.joined(separator: ", ")). No layout class was changed.")
            }
        }
        router.get("/v2/project/:pid/session/:sid/stream/:stid") { req in
            let s = try Self.session(req, core: core)
            guard let st = hub.streams(sessionID: s.id).first(where: { $0.id == req.parameter("stid") }) else {
                throw APIError.notFound("The stream is not in this session.")
            }
            return .jsonObject(st.restJSON)
        }
        router.post("/v2/project/:pid/session/:sid/stream/:stid/mute") { req in
            let s = try Self.session(req, core: core)
            guard hub.mute(sessionID: s.id, streamID: req.parameter("stid")) else { throw APIError.notFound("The stream is not in this session.") }
            return .jsonObject(["applicationId": req.parameter("pid"), "status": "ACTIVE", "name": "", "environment": "standard",
                                "createdAt": Int(s.createdAt.timeIntervalSince1970 * 1000)])
        }
        router.post("/v2/project/:pid/session/:sid/mute") { req in
            let s = try Self.session(req, core: core)
            var excluded: Set<String> = []
            var active = true
            if !req.body.isEmpty, case .object(let o) = try req.json() {
                excluded = Set(o["excludedStreamIds"]?.arrayValue?.compactMap(\.stringValue) ?? o["excludedStreams"]?.arrayValue?.compactMap(\.stringValue) ?? [])
                active = o["active"]?.boolValue ?? true
            }
            hub.muteAll(sessionID: s.id, excluded: excluded, active: active)
            return .jsonObject(["applicationId": req.parameter("pid"), "status": "ACTIVE", "name": "", "environment": "standard",
                                "createdAt": Int(s.createdAt.timeIntervalSince1970 * 1000)])
        }
        registerAudioConnector(on: &router)
        registerSIPDial(on: &router)
        registerArchives(on: &router)
        registerBroadcasts(on: &router)
        registerCaptions(on: &router)
        registerRenders(on: &router)
    }

    /// The caller's account and the project id it acts as (api key or application id).
    static func projectCredentials(_ req: HTTPRequest, core: PlatformCore, project: String?) throws -> (Account, String) {
        if let token = req.headers["x-opentok-auth"] {
            guard let decoded = try? JWT.decode(token), let iss = decoded.claims["iss"]?.stringValue,
                  decoded.claims["ist"]?.stringValue == "project", let account = try core.accounts.find(apiKey: iss) else {
                throw APIError.unauthorized("X-OPENTOK-AUTH is not valid.", challenge: "X-OPENTOK-AUTH")
            }
            let secrets = [account.apiSecret] + (account.previousSecret.map { [$0] } ?? [])
            let valid = secrets.contains { secret in
                (try? JWT.checkSignature(decoded, key: .hs256(Array(secret.utf8)))) != nil
            }
            guard valid, (try? JWT.checkClaims(decoded.claims, now: Date().timeIntervalSince1970, maxLifetime: 24 * 3600)) != nil else {
                throw APIError.unauthorized("X-OPENTOK-AUTH is not valid or has expired.", challenge: "X-OPENTOK-AUTH")
            }
            if let project, project != account.apiKey { throw APIError.forbidden("The credentials are for another project.") }
            return (account, account.apiKey)
        }
        switch req.caller {
        case .application(let app, _, _)?:
            if let project, project != app.id { throw APIError.forbidden("The credentials are for another project.") }
            guard let account = try core.accounts.find(apiKey: app.apiKey) else { throw APIError.forbidden() }
            return (account, app.id)
        case .account(let account)?:
            if let project, project != account.apiKey { throw APIError.forbidden("The credentials are for another project.") }
            return (account, account.apiKey)
        case .user?:
            throw APIError.forbidden("Video server APIs need project credentials, not a user token.")
        case nil:
            throw APIError.unauthorized("X-OPENTOK-AUTH or a Bearer application JWT is required.", challenge: "Bearer realm=\"switchboard\"")
        }
    }

    /// The `{sid}` of a `/v2/project/{pid}/session/{sid}/…` route, if it belongs to the caller's project.
    /// A session of another project, even of the same account, is the same 404 as one that does not exist.
    static func session(_ req: HTTPRequest, core: PlatformCore) throws -> VideoSession {
        let (_, project) = try projectCredentials(req, core: core, project: req.parameter("pid"))
        guard let s = try core.videoSessions.get(id: req.parameter("sid"), project: project) else {
            throw APIError.notFound("The session does not exist.")
        }
        return s
    }

    /// `{count, items}` of the session's streams, as `GET …/stream` lists them.
    static func streamList(_ streams: [VideoHub.Stream]) -> HTTPResponse {
        let items = streams.map(\.restJSON)
        return .jsonObject(["count": items.count, "items": items])
    }

    /// `{"items": [{"id": stream id, "layoutClassList": [class, …]}, …]}`; a class is a name without spaces, and a
    /// stream's classes written space-separated fit in the tokens' 1,000 characters.
    static func layoutClassLists(_ req: HTTPRequest) throws -> [(streamID: String, classes: [String])] {
        guard let items = try req.json()["items"]?.arrayValue, !items.isEmpty else {
            throw APIError.badRequest("items must be a non-empty array of {id, layoutClassList}.")
        }
        return try items.enumerated().map { index, item in
            guard let id = item["id"]?.stringValue, !id.isEmpty else { throw APIError.badRequest("items[\(index)].id must be a stream id.") }
            guard let values = item["layoutClassList"]?.arrayValue else {
                throw APIError.badRequest("items[\(index)].layoutClassList must be an array of class names.")
            }
            let classes = try values.map { value in
                guard let name = value.stringValue, !name.isEmpty, !name.contains(where: \.isWhitespace) else {
                    throw APIError.badRequest("items[\(index)].layoutClassList holds something that is not a class name (a string without spaces).")
                }
                return name
            }
            guard classes.joined(separator: " ").count <= VideoGrant.layoutClassListLimit else {
                throw APIError.badRequest("items[\(index)].layoutClassList is longer than \(VideoGrant.layoutClassListLimit) characters.")
            }
            return (id, classes)
        }
    }

    static func signalBody(_ req: HTTPRequest) throws -> (String, String) {
        let body = try req.json()
        guard let data = body["data"]?.stringValue else { throw APIError.badRequest("data is required.") }
        let type = body["type"]?.stringValue ?? ""
        guard type.utf8.count <= VideoHub.Limits.signalType else {
            throw APIError.badRequest("type is at most \(VideoHub.Limits.signalType) bytes.")
        }
        guard data.utf8.count <= VideoHub.Limits.signalData else {
            throw APIError(status: 413, code: "signal-too-large", title: "Payload Too Large", detail: "data is at most \(VideoHub.Limits.signalData) bytes.")
        }
        return (type, data)
    }

    static func httpDate(_ d: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE MMM dd HH:mm:ss zzz yyyy"
        return f.string(from: d)
    }
}
