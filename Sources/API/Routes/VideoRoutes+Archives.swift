import Foundation
import Live
import Platform
import Runtime
import VideoCodec
import Wire

/// Archives (`/v2/project/{id}/archive`): composed archives, an MP4 file of the session's audio mix and (unless
/// `hasVideo: false`) its streams laid out, and individual-stream archives (`outputMode: individual`), a file
/// per stream in a ZIP (`VideoArchives`); of every stream
/// (`streamMode: auto`) or of those chosen while recording (`manual`, `PATCH …/archive/{id}/streams`).
extension VideoRoutes {
    func registerArchives(on router: inout Router) {
        guard let archives else { return }
        let core = self.core
        router.post("/v2/project/:pid/archive") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let body = try req.json()
            guard let sid = body["sessionId"]?.stringValue, !sid.isEmpty else { throw APIError.badRequest("sessionId is required.") }
            let individual: Bool
            switch body["outputMode"] {
            case nil, .string("composed")?: individual = false
            case .string("individual")?: individual = true
            default: throw APIError.badRequest("outputMode must be composed or individual.")
            }
            let composition = try Self.composition(body, of: "archive")
            var options = VideoArchives.Options(individual: individual, hasAudio: composition.hasAudio, hasVideo: composition.hasVideo,
                                                manual: composition.manual, layout: composition.layout, maxBitrate: composition.maxBitrate)
            if let resolution = composition.resolution {
                guard !individual else { throw APIError.badRequest("resolution: only composed archives have one.") }
                options.resolution = resolution
            }
            options.multiArchiveTag = try Self.tag(body, "multiArchiveTag")
            // A constant quantizer instead of a bitrate: composed archives with video only, and not with maxBitrate.
            options.quantizationParameter = try Self.wholeNumber(body, "quantizationParameter", in: ArchiveCanvas.quantizers)
            if options.quantizationParameter != nil {
                guard !individual, composition.hasVideo else { throw APIError.badRequest("quantizationParameter: only composed archives with video have one.") }
                guard composition.maxBitrate == nil else { throw APIError.badRequest("quantizationParameter: not with maxBitrate.") }
            }
            // Asked for and not done here: refused rather than ignored.
            if body["hasTranscription"] == .bool(true) {
                throw APIError.badRequest("hasTranscription: archives are not transcribed here.", code: "unsupported-option")
            }
            options.name = body["name"]?.stringValue ?? ""
            guard options.name.utf8.count <= 256 else { throw APIError.badRequest("name must be at most 256 bytes.") }
            guard let session = try core.videoSessions.get(id: sid, project: project) else {
                throw APIError.notFound("sessionId is not a session of this project.")
            }
            guard session.mediaMode == "routed" else {
                throw APIError.conflict("Only routed sessions can be archived.", code: "session-not-routed")
            }
            do {
                let archive = try await archives.start(sessionID: session.id, projectID: project, options)
                return .jsonObject(archive.json(url: nil))
            } catch {
                throw Self.archiveError(error)
            }
        }
        router.get("/v2/project/:pid/archive") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let all = archives.list(projectID: project, sessionID: req.query["sessionId"])
            let offset = max(0, Int(req.query["offset"] ?? "") ?? 0)
            let count = min(1000, max(1, Int(req.query["count"] ?? "") ?? 50))
            let page = all.dropFirst(offset).prefix(count)
            return .jsonObject(["count": all.count, "items": page.map { $0.json(url: Self.archiveURL(req, $0)) }])
        }
        router.get("/v2/project/:pid/archive/:aid") { req in
            let archive = try Self.archive(req, core: core, archives: archives)
            return .jsonObject(archive.json(url: Self.archiveURL(req, archive)))
        }
        router.post("/v2/project/:pid/archive/:aid/stop") { req in
            let archive = try Self.archive(req, core: core, archives: archives)
            do {
                let stopped = try await archives.stop(archive.id)
                return .jsonObject(stopped.json(url: Self.archiveURL(req, stopped)))
            } catch {
                throw Self.archiveError(error)
            }
        }
        router.put("/v2/project/:pid/archive/:aid/layout") { req in
            let archive = try Self.archive(req, core: core, archives: archives)
            let layout = try Self.archiveLayout(try req.json())
            do { try archives.setLayout(archive.id, layout) } catch { throw Self.archiveError(error) }
            return .jsonObject(archive.json(url: nil))
        }
        // Chooses a stream for a manual archive (`addStream`, with `hasAudio`/`hasVideo`, both true unless
        // said), again to change what of it is recorded, or leaves one out (`removeStream`).
        router.patch("/v2/project/:pid/archive/:aid/streams") { req in
            let archive = try Self.archive(req, core: core, archives: archives)
            let change = try Self.streamChange(try req.json())
            do { try await archives.changeStreams(archive.id, change) } catch { throw Self.archiveError(error) }
            return .noContent()
        }
        router.delete("/v2/project/:pid/archive/:aid") { req in
            let archive = try Self.archive(req, core: core, archives: archives)
            do { try await archives.delete(archive.id) } catch { throw Self.archiveError(error) }
            return .noContent()
        }
        router.get("/v2/project/:pid/archive/:aid/download") { req in
            let archive = try Self.archive(req, core: core, archives: archives)
            guard let path = await archives.file(archive.id), let handle = FileHandle(forReadingAtPath: path) else {
                throw APIError.conflict("The archive is not available (status \(archive.status.rawValue)).", code: "archive-not-available")
            }
            var headers = HTTPHeaders()
            headers["Content-Type"] = archive.contentType
            headers["Content-Disposition"] = "attachment; filename=\"archive-\(archive.id).\(archive.fileExtension)\""
            return HTTPResponse(status: 200, headers: headers) { writer in
                defer { try? handle.close() }
                while let chunk = try handle.read(upToCount: 64 << 10), !chunk.isEmpty { try await writer.write([UInt8](chunk)) }
            }
        }
    }

    /// What archives and broadcasts of composed sessions share: the media (`hasAudio`, `hasVideo`: at least one),
    /// the stream mode, the layout, the resolution and the bitrate's bound.
    struct Composition {
        var hasAudio: Bool
        var hasVideo: Bool
        var manual: Bool
        var layout: ArchiveLayout
        var resolution: String?
        var maxBitrate: Int?
    }

    static func composition(_ body: JSONValue, of what: String) throws -> Composition {
        let hasAudio = try flag(body, "hasAudio"), hasVideo = try flag(body, "hasVideo")
        guard hasAudio || hasVideo else { throw APIError.badRequest("hasAudio: \(what == "archive" ? "an" : "a") \(what) with neither audio nor video has nothing in it.") }
        var composition = Composition(hasAudio: hasAudio, hasVideo: hasVideo, manual: false, layout: try archiveLayout(body["layout"] ?? .null))
        switch body["streamMode"] {
        case nil, .null?, .string("auto")?: break
        case .string("manual")?: composition.manual = true
        default: throw APIError.badRequest("streamMode must be auto or manual.")
        }
        switch body["resolution"] {
        case nil, .null?: break
        case .string(let resolution)? where ArchiveCanvas.resolutions.contains(resolution): composition.resolution = resolution
        default: throw APIError.badRequest("resolution must be one of \(ArchiveCanvas.resolutions.joined(separator: ", ")).")
        }
        composition.maxBitrate = try wholeNumber(body, "maxBitrate", in: ArchiveCanvas.maxBitrates, of: "bits per second")
        return composition
    }

    /// A whole number (of `unit`) in `range`, when given.
    static func wholeNumber(_ body: JSONValue, _ name: String, in range: ClosedRange<Int>, of unit: String? = nil) throws -> Int? {
        switch body[name] {
        case nil, .null?: return nil
        case .number(let n)? where Int(exactly: n).map(range.contains) == true: return Int(n)
        default: throw APIError.badRequest("\(name) must be a whole number\(unit.map { " of " + $0 } ?? "") from \(range.lowerBound) to \(range.upperBound).")
        }
    }

    /// `multiArchiveTag` or `multiBroadcastTag`, when given: 1 to 256 bytes.
    static func tag(_ body: JSONValue, _ name: String) throws -> String? {
        switch body[name] {
        case nil, .null?: return nil
        case .string(let tag)? where !tag.isEmpty && tag.utf8.count <= 256: return tag
        default: throw APIError.badRequest("\(name) must be a string of 1 to 256 bytes.")
        }
    }

    /// A manual recording's stream change: `addStream` (with `hasAudio`/`hasVideo`, both true unless said), or
    /// `removeStream`.
    static func streamChange(_ body: JSONValue) throws -> StreamChange {
        switch (body["addStream"], body["removeStream"]) {
        case (.string(let stream)?, nil), (.string(let stream)?, .null?):
            let hasAudio = try flag(body, "hasAudio"), hasVideo = try flag(body, "hasVideo")
            guard hasAudio || hasVideo else { throw APIError.badRequest("hasAudio: a stream with neither audio nor video adds nothing.") }
            return .add(stream, hasAudio: hasAudio, hasVideo: hasVideo)
        case (nil, .string(let stream)?), (.null?, .string(let stream)?):
            return .remove(stream)
        default:
            throw APIError.badRequest("Give one of addStream and removeStream, a stream id.")
        }
    }

    /// `hasAudio` or `hasVideo`: true unless said.
    static func flag(_ body: JSONValue, _ name: String) throws -> Bool {
        switch body[name] {
        case nil, .null?: return true
        case .bool(let b)?: return b
        default: throw APIError.badRequest("\(name) must be a boolean.")
        }
    }

    /// The archive the path names, which must be the caller's project's (else 404, as for none).
    static func archive(_ req: HTTPRequest, core: PlatformCore, archives: VideoArchives) throws -> VideoArchives.Archive {
        let (_, project) = try projectCredentials(req, core: core, project: req.parameter("pid"))
        guard let archive = archives.get(req.parameter("aid")), archive.projectID == project else {
            throw APIError.notFound("No archive with this id.")
        }
        return archive
    }

    /// Where an available archive's file is downloaded (with the project's credentials).
    static func archiveURL(_ req: HTTPRequest, _ archive: VideoArchives.Archive) -> String {
        "\(req.baseURL)/v2/project/\(archive.projectID)/archive/\(archive.id)/download"
    }

    /// A layout object (`{type, screenshareType}` or `{type: custom, stylesheet}`, or null for the default): one
    /// of the predefined layouts, or a custom one (`LayoutStylesheet`).
    static func archiveLayout(_ value: JSONValue) throws -> ArchiveLayout {
        func kind(_ field: String) throws -> CompositeLayout.Kind? {
            switch value[field] {
            case nil, .null?: return nil
            case .string(let name)?:
                guard let kind = CompositeLayout.Kind(rawValue: name) else {
                    throw APIError.badRequest("layout \(field): \(name) is not a layout; one of \((CompositeLayout.Kind.allCases.map(\.rawValue) + (field == "type" ? ["custom"] : [])).joined(separator: ", ")).")
                }
                return kind
            default: throw APIError.badRequest("layout \(field) must be a string.")
            }
        }
        switch value {
        case .null: return ArchiveLayout()
        case .object: break
        default: throw APIError.badRequest("layout must be an object.")
        }
        let stylesheet = value["stylesheet"].flatMap { $0 == .null ? nil : $0 }
        if value["type"] == .string("custom") {
            guard case .string(let css)? = stylesheet, let sheet = LayoutStylesheet(css) else {
                throw APIError.badRequest("layout stylesheet: a custom layout needs CSS with a rule for stream elements (at most \(LayoutStylesheet.maxBytes) bytes).")
            }
            guard value["screenshareType"].map({ $0 == .null }) ?? true else { throw APIError.badRequest("layout screenshareType: only with type bestFit.") }
            return ArchiveLayout(stylesheet: sheet)
        }
        guard stylesheet == nil else { throw APIError.badRequest("layout stylesheet: only with type custom.") }
        let layout = ArchiveLayout(kind: try kind("type") ?? .bestFit, screenshare: try kind("screenshareType"))
        if layout.screenshare != nil, layout.kind != .bestFit {
            throw APIError.badRequest("layout screenshareType: only with type bestFit.")
        }
        return layout
    }

    static func archiveError(_ error: any Error) -> APIError {
        switch error as? VideoArchives.Failure {
        case .alreadyRecording?: .conflict("The session is already being archived.", code: "archive-in-progress")
        case .noClients?: .notFound("No clients are connected to the session.", code: "no-clients")
        case .media(let why)?: .unavailable("The session could not be recorded: \(why)")
        case .notFound?: .notFound("No archive with this id.")
        case .notRecording?: .conflict("The archive is not being recorded.", code: "archive-not-started")
        case .recording?: .conflict("The archive is being recorded: stop it first.", code: "archive-in-progress")
        case .autoStreamMode?: APIError(status: 405, code: "stream-mode-auto", title: "Method Not Allowed",
                                   detail: "The archive records every stream (streamMode auto): streams are chosen only in manual mode.")
        case .storage?: .unavailable("The archive could not be saved (the data directory cannot be written).")
        case .noStream(let stream)?: .notFound("No stream \(stream) in the archive's session (or, to remove, in the archive).", code: "stream-not-found")
        case nil: .unavailable("\(error)")
        }
    }
}
