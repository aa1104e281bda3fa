import Foundation
import Platform
import Runtime
import Wire

/// Server-side helpers for the video playground (`/video`): it needs a session and tokens, which
/// normally an app server makes with the account secret. These routes make them with the
/// primary account so the secret never reaches the browser.
///
/// - `POST /video/api/session` `{mediaMode?: routed (the default) | relayed}` → `{sessionId, apiKey, mediaMode}`
/// - `POST /video/api/token` `{sessionId, role, data, ttl}` → `{token, role, expiresAt}` (a T1 token)
/// - `POST /video/api/broadcast` `{sessionId}` → `{id, hls}`: the session live as low-latency HLS (a broadcast,
///   `VideoBroadcasts`), which the page plays in its `<video>`; `POST /video/api/broadcast/stop` `{id}` stops it
/// - `POST /video/api/captions` `{sessionId}` → `{captionsId}`: live captions of the session (`VideoCaptions`, at most
///   an hour, partial captions on); `POST /video/api/captions/stop` `{id}` stops them
///
/// Allowed for Basic account credentials, or without credentials from a loopback client (the
/// playground opened on the machine that runs the server). Anyone else gets 401.
struct VideoPlaygroundRoutes {
    let core: PlatformCore
    let account: Account
    let broadcasts: VideoBroadcasts?
    let captions: VideoCaptions?
    let renders: VideoRenders?

    func register(on router: inout Router) {
        let core = self.core
        let primary = account
        router.post("/video/api/session", bodyLimit: 4096) { req in
            let account = try Self.account(req, primary: primary, core: core)
            let mode = req.body.isEmpty ? nil : try req.json()["mediaMode"]?.stringValue
            guard mode == nil || mode == "routed" || mode == "relayed" else { throw APIError.badRequest("mediaMode is routed or relayed.") }
            let s = try core.videoSessions.create(owner: account.apiKey, apiKey: account.apiKey, mediaMode: mode ?? "routed", archiveMode: "manual", location: nil)
            return .jsonObject(["sessionId": s.id, "apiKey": account.apiKey, "mediaMode": s.mediaMode])
        }
        router.post("/video/api/token", bodyLimit: 4096) { req in
            let account = try Self.account(req, primary: primary, core: core)
            let body = try req.json()
            // T1 tokens are signed with the account key: only the account key's own sessions take them.
            guard let sid = body["sessionId"]?.stringValue, try core.videoSessions.get(id: sid, project: account.apiKey) != nil else {
                throw APIError.notFound("No such session for this account.")
            }
            let roleName = body["role"]?.stringValue ?? "publisher"
            guard let role = VideoGrant.Role(rawValue: roleName) else {
                throw APIError.badRequest("role must be one of \(VideoGrant.Role.allCases.map(\.rawValue).joined(separator: ", ")).")
            }
            let ttl = body["ttl"]?.doubleValue ?? 3600
            guard ttl > 0, ttl <= VideoTokenVerifier.maxLifetime else { throw APIError.badRequest("ttl is 1 s to 30 days.") }
            let data = body["data"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
            guard (data?.utf8.count ?? 0) <= 1000 else { throw APIError.badRequest("data is at most 1000 bytes.") }
            let token = VideoTokenVerifier.makeT1(apiKey: account.apiKey, apiSecret: account.apiSecret, sessionID: sid, role: role, data: data, ttl: ttl)
            return .jsonObject(["token": token, "role": role.rawValue, "expiresAt": Int(Date().timeIntervalSince1970 + ttl)])
        }
        if let captions {
            router.post("/video/api/captions", bodyLimit: 4096) { req in
                let account = try Self.account(req, primary: primary, core: core)
                guard let sid = try req.json()["sessionId"]?.stringValue, try core.videoSessions.get(id: sid, project: account.apiKey) != nil else {
                    throw APIError.notFound("No such session for this account.")
                }
                let token = VideoTokenVerifier.makeT1(apiKey: account.apiKey, apiSecret: account.apiSecret, sessionID: sid, role: .moderator, data: nil, ttl: 60)
                let started = try captions.start(try VideoCaptions.Request(["sessionId": .string(sid), "token": .string(token), "maxDuration": .number(3_600)]),
                                                 project: account.apiKey)
                return .jsonObject(["captionsId": started.id])
            }
            router.post("/video/api/captions/stop", bodyLimit: 4096) { req in
                let account = try Self.account(req, primary: primary, core: core)
                guard let id = try req.json()["id"]?.stringValue, captions.stop(id: id, project: account.apiKey) else {
                    throw APIError.notFound("No such captions for this account.")
                }
                return .noContent()
            }
        }
        if let renders {
            router.post("/video/api/render", bodyLimit: 8192) { req in
                let account = try Self.account(req, primary: primary, core: core)
                let body = try req.json()
                guard let sid = body["sessionId"]?.stringValue, try core.videoSessions.get(id: sid, project: account.apiKey) != nil else {
                    throw APIError.notFound("No such session for this account.")
                }
                let token = VideoTokenVerifier.makeT1(apiKey: account.apiKey, apiSecret: account.apiSecret, sessionID: sid, role: .publisher,
                                                      data: "name=composer", ttl: 3_600)
                let ask = try VideoRenders.Request(["sessionId": .string(sid), "token": .string(token), "url": body["url"] ?? .null,
                                                   "resolution": "640x480", "maxDuration": .number(3_600), "properties": ["name": "composed page"]])
                return .jsonObject(["id": try renders.start(ask, project: account.apiKey).id])
            }
            router.post("/video/api/render/stop", bodyLimit: 4096) { req in
                let account = try Self.account(req, primary: primary, core: core)
                guard let id = try req.json()["id"]?.stringValue, renders.stop(id: id, project: account.apiKey) else {
                    throw APIError.notFound("No such Experience Composer running for this account.")
                }
                return .noContent()
            }
        }
        guard let broadcasts else { return }
        router.post("/video/api/broadcast", bodyLimit: 4096) { req in
            let account = try Self.account(req, primary: primary, core: core)
            guard let sid = try req.json()["sessionId"]?.stringValue, try core.videoSessions.get(id: sid, project: account.apiKey) != nil else {
                throw APIError.notFound("No such session for this account.")
            }
            var options = VideoBroadcasts.Options()
            (options.hls, options.lowLatency, options.maxDuration) = (true, true, 3_600)
            do {
                let broadcast = try await broadcasts.start(sessionID: sid, projectID: account.apiKey, options)
                return .jsonObject(["id": broadcast.id, "hls": VideoRoutes.hlsURL(req, broadcast.id)])
            } catch {
                throw VideoRoutes.broadcastError(error)
            }
        }
        router.post("/video/api/broadcast/stop", bodyLimit: 4096) { req in
            let account = try Self.account(req, primary: primary, core: core)
            guard let id = try req.json()["id"]?.stringValue, broadcasts.get(id)?.projectID == account.apiKey else {
                throw APIError.notFound("No such broadcast for this account.")
            }
            do { _ = try await broadcasts.stop(id) } catch { throw VideoRoutes.broadcastError(error) }
            return .noContent()
        }
    }

    static func account(_ req: HTTPRequest, primary: Account, core: PlatformCore) throws -> Account {
        if case .account(let a)? = req.caller { return a }
        if req.caller == nil, let host = req.remoteAddress?.host, SocketAddress.isLoopback(host) {
            // Read it again: the secret may have been rotated since start.
            return try core.accounts.find(apiKey: primary.apiKey) ?? primary
        }
        throw APIError.unauthorized("The playground API needs account credentials unless used from this machine.",
                                    challenge: "Basic realm=\"switchboard\"")
    }
}
