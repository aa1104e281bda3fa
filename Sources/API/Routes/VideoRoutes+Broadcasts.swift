import Foundation
import Live
import Platform
import Runtime
import VideoCodec
import Wire

/// Live-streaming broadcasts (`/v2/project/{id}/broadcast`, `VideoBroadcasts`): a session composed as a
/// composed archive is, to an HLS playlist served here (`/broadcast/{id}/hls/live.m3u8`, no credentials: the
/// broadcast's id is its secret, as a CDN's address is) and to RTMP servers.
extension VideoRoutes {
    func registerBroadcasts(on router: inout Router) {
        guard let broadcasts else { return }
        let core = self.core
        router.post("/v2/project/:pid/broadcast") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let body = try req.json()
            guard let sid = body["sessionId"]?.stringValue, !sid.isEmpty else { throw APIError.badRequest("sessionId is required.") }
            let composition = try Self.composition(body, of: "broadcast")
            var options = VideoBroadcasts.Options(hasAudio: composition.hasAudio, hasVideo: composition.hasVideo, manual: composition.manual,
                                                  layout: composition.layout, maxBitrate: composition.maxBitrate)
            options.resolution = composition.resolution ?? options.resolution
            options.multiBroadcastTag = try Self.tag(body, "multiBroadcastTag")
            options.maxDuration = try Self.wholeNumber(body, "maxDuration", in: VideoBroadcasts.maxDurations, of: "seconds") ?? options.maxDuration
            try Self.broadcastOutputs(body["outputs"], into: &options)
            guard let session = try core.videoSessions.get(id: sid, project: project) else {
                throw APIError.notFound("sessionId is not a session of this project.")
            }
            guard session.mediaMode == "routed" else {
                throw APIError.conflict("Only routed sessions can be broadcast.", code: "session-not-routed")
            }
            do {
                let broadcast = try await broadcasts.start(sessionID: session.id, projectID: project, options)
                return .jsonObject(broadcast.json(hlsURL: Self.hlsURL(req, broadcast.id), statuses: nil))
            } catch {
                throw Self.broadcastError(error)
            }
        }
        router.get("/v2/project/:pid/broadcast") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let all = broadcasts.list(projectID: project, sessionID: req.query["sessionId"])
            let offset = max(0, Int(req.query["offset"] ?? "") ?? 0)
            let count = min(1000, max(1, Int(req.query["count"] ?? "") ?? 50))
            let page = all.dropFirst(offset).prefix(count)
            return .jsonObject(["count": all.count, "items": page.map { $0.json(hlsURL: Self.hlsURL(req, $0.id), statuses: broadcasts.statuses($0.id)) }])
        }
        router.get("/v2/project/:pid/broadcast/:bid") { req in
            let broadcast = try Self.broadcast(req, core: core, broadcasts: broadcasts)
            return .jsonObject(broadcast.json(hlsURL: Self.hlsURL(req, broadcast.id), statuses: broadcasts.statuses(broadcast.id)))
        }
        router.post("/v2/project/:pid/broadcast/:bid/stop") { req in
            let broadcast = try Self.broadcast(req, core: core, broadcasts: broadcasts)
            do {
                let stopped = try await broadcasts.stop(broadcast.id)
                return .jsonObject(stopped.json(hlsURL: Self.hlsURL(req, stopped.id), statuses: nil))
            } catch {
                throw Self.broadcastError(error)
            }
        }
        router.put("/v2/project/:pid/broadcast/:bid/layout") { req in
            let broadcast = try Self.broadcast(req, core: core, broadcasts: broadcasts)
            let layout = try Self.archiveLayout(try req.json())
            do { try broadcasts.setLayout(broadcast.id, layout) } catch { throw Self.broadcastError(error) }
            return .jsonObject(broadcast.json(hlsURL: Self.hlsURL(req, broadcast.id), statuses: broadcasts.statuses(broadcast.id)))
        }
        router.patch("/v2/project/:pid/broadcast/:bid/streams") { req in
            let broadcast = try Self.broadcast(req, core: core, broadcasts: broadcasts)
            let change = try Self.streamChange(try req.json())
            do { try await broadcasts.changeStreams(broadcast.id, change) } catch { throw Self.broadcastError(error) }
            return .noContent()
        }
        // The HLS output, for any player: the playlist changes as segments come, a segment never does. A
        // low-latency playlist is also reloaded blocking (`_HLS_msn`, `_HLS_part`: held until it holds what was
        // asked for), and the part being made (the playlist's preload hint) is held until it is written.
        router.get("/broadcast/:bid/hls/:file") { req in
            let id = req.parameter("bid"), name = req.parameter("file")
            guard let path = broadcasts.hlsFile(id, name) else { throw APIError.notFound("No such broadcast file.") }
            let playlist = name == MediaWriter.Output.playlist
            if let progress = broadcasts.hlsProgress(id) {
                let request: LowLatencyPlaylist.Request?
                if playlist {
                    do {
                        request = try LowLatencyPlaylist.Request(query: req.query)
                    } catch {
                        throw APIError.badRequest("_HLS_msn and _HLS_part must be whole numbers, and _HLS_part comes with _HLS_msn.")
                    }
                } else if let (segment, part) = LowLatencyPlaylist.file(named: name), let part, !FileManager.default.fileExists(atPath: path) {
                    request = LowLatencyPlaylist.Request(msn: segment, part: part)
                } else {
                    request = nil
                }
                if let request {
                    if progress.position.tooFarAhead(request) { throw APIError.badRequest("The playlist is not that far yet.") }
                    if !(await progress.wait(for: request, timeout: Self.blockingReload)) && playlist {
                        throw APIError.unavailable("The playlist did not get that far in time.")
                    }
                }
            }
            guard let data = FileManager.default.contents(atPath: path) else { throw APIError.notFound("No such broadcast file.") }
            var headers = HTTPHeaders()
            headers["Content-Type"] = playlist ? "application/vnd.apple.mpegurl" : "video/mp2t"
            headers["Cache-Control"] = playlist ? "no-cache" : "max-age=3600"
            headers["Access-Control-Allow-Origin"] = "*"
            return HTTPResponse(status: 200, headers: headers, body: [UInt8](data))
        }
    }

    /// How long a blocking playlist reload is held at most: three target durations (RFC 8216bis).
    static let blockingReload: Duration = .seconds(6)

    /// `outputs`: `hls` (`{dvr}` or `{lowLatency}`, not both) and/or `rtmp` (up to five
    /// `{id, serverUrl, streamName}`, `rtmp://` or `rtmps://`).
    static func broadcastOutputs(_ outputs: JSONValue?, into options: inout VideoBroadcasts.Options) throws {
        guard case .object? = outputs, let outputs else { throw APIError.badRequest("outputs is required: an object with hls, rtmp or both.") }
        switch outputs["hls"] {
        case nil, .null?: break
        case .object?:
            let hls = outputs["hls"]!
            let dvr = hls["dvr"] == .bool(true), lowLatency = hls["lowLatency"] == .bool(true)
            if dvr && lowLatency { throw APIError.badRequest("outputs.hls: dvr and lowLatency cannot both be true.") }
            options.hls = true
            options.dvr = dvr
            options.lowLatency = lowLatency
        default: throw APIError.badRequest("outputs.hls must be an object.")
        }
        switch outputs["rtmp"] {
        case nil, .null?: break
        case .array(let targets)?:
            guard targets.count <= VideoBroadcasts.maxRTMPTargets else {
                throw APIError.badRequest("outputs.rtmp: at most \(VideoBroadcasts.maxRTMPTargets) RTMP streams.")
            }
            for target in targets {
                guard let server = target["serverUrl"]?.stringValue, let scheme = URLComponents(string: server)?.scheme?.lowercased(),
                      ["rtmp", "rtmps"].contains(scheme), URLComponents(string: server)?.host?.isEmpty == false else {
                    throw APIError.badRequest("outputs.rtmp serverUrl must be an rtmp:// or rtmps:// address.")
                }
                guard let name = target["streamName"]?.stringValue, !name.isEmpty, !name.contains(where: \.isWhitespace) else {
                    throw APIError.badRequest("outputs.rtmp streamName is required.")
                }
                options.rtmp.append(VideoBroadcasts.RTMPTarget(id: target["id"]?.stringValue, serverUrl: server, streamName: name))
            }
        default: throw APIError.badRequest("outputs.rtmp must be an array.")
        }
        guard options.hls || !options.rtmp.isEmpty else { throw APIError.badRequest("outputs: give hls, rtmp or both.") }
    }

    static func broadcast(_ req: HTTPRequest, core: PlatformCore, broadcasts: VideoBroadcasts) throws -> VideoBroadcasts.Broadcast {
        let (_, project) = try projectCredentials(req, core: core, project: req.parameter("pid"))
        guard let broadcast = broadcasts.get(req.parameter("bid")), broadcast.projectID == project else {
            throw APIError.notFound("No broadcast with this id.")
        }
        return broadcast
    }

    static func hlsURL(_ req: HTTPRequest, _ id: String) -> String { hlsURL(base: req.baseURL, id) }
    static func hlsURL(base: String, _ id: String) -> String { "\(base)/broadcast/\(id)/hls/\(MediaWriter.Output.playlist)" }

    static func broadcastError(_ error: any Error) -> APIError {
        switch error as? VideoBroadcasts.Failure {
        case .alreadyBroadcasting?: .conflict("The broadcast has already started for the session.", code: "broadcast-in-progress")
        case .noClients?: .notFound("No clients are connected to the session.", code: "no-clients")
        case .media(let why)?: .unavailable("The session could not be broadcast: \(why)")
        case .notFound?: .notFound("No broadcast with this id.")
        case .notBroadcasting?: .conflict("The broadcast is not running.", code: "broadcast-not-started")
        case .autoStreamMode?: APIError(status: 405, code: "stream-mode-auto", title: "Method Not Allowed",
                                   detail: "The broadcast sends every stream (streamMode auto): streams are chosen only in manual mode.")
        case .storage?: .unavailable("The broadcast could not be saved (the data directory cannot be written).")
        case .noStream(let stream)?: .notFound("No stream \(stream) in the broadcast's session (or, to remove, in the broadcast).", code: "stream-not-found")
        case nil: .unavailable("\(error)")
        }
    }
}
