import Crypto
import Foundation
import Live
import Media
import Platform
import Runtime
import Synchronization
import Wire

/// Archives of video sessions. Composed ones are an MP4 file (`ComposedArchive`): the session's audio mix
/// (the Audio Connector's) as AAC and, with video, every stream laid out on one canvas as H.264.
/// Individual-stream ones are a file per stream (WebM for VP8, Matroska for H.264; as published, nothing re-encoded) in a ZIP
/// with a JSON manifest (`IndividualArchive`). An archive's metadata is a JSON file under
/// `<data>/video/archives/`, written before each reply, so what a reply said survives a restart; an archive
/// still recording when the server stopped is `failed` at the next start (a composed one's file, fragmented,
/// still plays up to its last fragment). Audio-only archives of earlier versions (Ogg Opus, recorded by
/// `Recordings`) are still listed, downloaded and deleted.
///
/// An archive records every stream of its session (`streamMode: auto`), or only those chosen while it records
/// (`manual`: `changeStreams`, each with its audio, its video or both): a composed archive's audio is then
/// what a participant of the session's mix hears who hears only the chosen streams' audio, its picture the
/// chosen streams' video; an individual archive records a file per chosen stream, a new one each time a
/// stream is chosen again or with other media.
final class VideoArchives: Sendable {
    struct Archive: Codable, Sendable, Equatable {
        /// `paused` while nobody publishes in the session (nothing is recorded then), as the Video API's.
        enum Status: String, Codable, Sendable { case started, paused, available, failed }
        var id: String
        var sessionID: String
        var projectID: String
        var name: String
        var createdAt: Int64
        var status: Status
        var reason: String
        var recordingID: String
        var duration: Int
        var size: Int
        var updatedAt: Int64
        /// Absent from the metadata of audio-only archives of earlier versions: the output mode, what is recorded,
        /// and the file written by an `ArchiveRecorder` (a ZIP, or a composed MP4).
        var outputMode: String?
        var hasAudio: Bool?
        var hasVideo: Bool?
        var file: String?
        /// In manual stream mode, the streams chosen so far; nil in auto.
        var streams: [ChosenStream]?
        /// A composed archive's picture (absent from metadata older than it: 640 × 480), and its bitrate's bound
        /// (b/s) when one was asked for.
        var resolution: String?
        var maxBitrate: Int?
        /// A composed archive's constant quantizer, instead of a bitrate, when one was asked for.
        var quantizationParameter: Int?
        /// Archives of one session record at the same time only when each has a tag of its own.
        var multiArchiveTag: String?
        /// Started because the session is archived automatically (`archiveMode: always`).
        var automatic: Bool?

        var manual: Bool { streams != nil }
        var selection: StreamSelection {
            StreamSelection(kinds: Set((hasAudio ?? true ? [MediaKind.audio] : []) + (hasVideo ?? false ? [.video] : [])), chosen: streams)
        }
        var canvas: ArchiveCanvas {
            ArchiveCanvas(resolution: resolution ?? ArchiveCanvas.standard.resolution, maxBitrate: maxBitrate, quantizer: quantizationParameter) ?? .standard
        }

        /// Whether this archive, recording, keeps one with `tag` from recording the same session.
        func excludes(tag: String?) -> Bool { recording && (tag == nil || multiArchiveTag == nil || tag == multiArchiveTag) }

        var individual: Bool { outputMode == "individual" }
        /// Started and not yet ended (recording, or paused).
        var recording: Bool { status == .started || status == .paused }
        /// Recorded by an `ArchiveRecorder`: every archive but the audio-only ones of earlier versions, which
        /// `Recordings` wrote as Ogg Opus (their metadata names the recording).
        var recordsItself: Bool { recordingID.isEmpty }
        /// The file's kind: a ZIP (individual), MP4 (composed; WebM or Ogg Opus from earlier versions).
        var fileExtension: String { recordsItself ? file.map { ($0 as NSString).pathExtension } ?? (individual ? "zip" : "mp4") : "ogg" }
        var contentType: String {
            switch fileExtension {
            case "zip": "application/zip"
            case "webm": "video/webm"
            case "ogg": "audio/ogg"
            default: hasVideo == true ? "video/mp4" : "audio/mp4"
            }
        }

        /// The Video API's archive object; `url` where the file is, once available.
        func json(url: String?) -> [String: Any] {
            var object: [String: Any] = ["id": id, "sessionId": sessionID, "projectId": projectID, "partnerId": projectID, "name": name, "createdAt": createdAt, "updatedAt": updatedAt,
             "status": status.rawValue, "reason": reason, "duration": duration, "size": size, "hasAudio": hasAudio ?? true,
             "hasVideo": hasVideo ?? false, "outputMode": outputMode ?? "composed", "streamMode": manual ? "manual" : "auto",
             "resolution": !individual && hasVideo == true ? canvas.resolution as Any : NSNull(), "event": "archive",
             "url": status == .available ? url.map { $0 as Any } ?? NSNull() : NSNull(), "sha256sum": "", "password": "",
             // As the Video API: the streams being recorded, while a manual archive records.
             "streams": recording ? (streams ?? []).map(\.json) : []]
            if let maxBitrate { object["maxBitrate"] = maxBitrate }
            if let quantizationParameter { object["quantizationParameter"] = quantizationParameter }
            return object
        }
    }

    let directory: String
    let hub: VideoHub
    private let linger: SessionLinger
    let recordings: Recordings
    private let archives: Mutex<[String: Archive]>
    /// Archives being recorded by an `ArchiveRecorder`.
    private let recorders = Mutex<[String: ArchiveRecorder]>([:])
    /// How each composed archive with video lays its streams out, while it records (`setLayout` changes it).
    private let layouts = Mutex<[String: ArchiveLayout]>([:])
    let engine: MediaEngine
    /// Called after every change of an archive's status (the `archive_status` callback).
    let changed: @Sendable (Archive) -> Void
    /// Seconds an archive records at most, pauses not counted (`--archive-max-duration`).
    let maxDuration: Int

    init(directory: String, hub: VideoHub, recordings: Recordings, maxDuration: Int = 14_400, changed: @escaping @Sendable (Archive) -> Void = { _ in }) {
        self.directory = directory
        self.maxDuration = maxDuration
        self.hub = hub
        linger = SessionLinger(hub: hub)
        self.recordings = recordings
        engine = recordings.engine
        self.changed = changed
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var loaded: [String: Archive] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                  var archive = try? JSONDecoder().decode(Archive.self, from: data) else { continue }
            if archive.recording {
                archive.status = .failed
                archive.reason = "the server stopped while it was recording"
                Self.save(archive, directory: directory)
            }
            loaded[archive.id] = archive
        }
        archives = Mutex(loaded)
    }

    /// What an archive records and how: composed (the mix; with video, the streams laid out at `resolution`,
    /// one of `ArchiveCanvas.resolutions`) or individual, of every stream or (manual) of those chosen.
    struct Options: Sendable {
        var name = ""
        var individual = false
        var hasAudio = true
        var hasVideo = false
        var manual = false
        var layout = ArchiveLayout()
        var resolution = ArchiveCanvas.standard.resolution
        var maxBitrate: Int?
        var quantizationParameter: Int?
        var multiArchiveTag: String?
        /// Started by the server for a session archived automatically: at the maximum duration the next one starts.
        var automatic = false
    }

    enum Failure: Error {
        case alreadyRecording
        case noClients
        case media(String)
        case notFound
        case notRecording
        case recording
        /// Streams are chosen only for an archive in manual stream mode.
        case autoStreamMode
        case noStream(String)
        /// The archive's metadata could not be written.
        case storage
    }

    /// Starts recording: the session's mix (composed; with video, its streams laid out too), or each of its streams
    /// (individual), with the kinds of media asked for; in manual stream mode, none until `changeStreams` chooses.
    func start(sessionID: String, projectID: String, _ options: Options = Options()) async throws(Failure) -> Archive {
        guard !hub.connections(sessionID: sessionID).isEmpty else { throw .noClients }
        let id = UUID4.generate()
        let (name, individual, hasAudio, hasVideo, manual, layout) =
            (options.name, options.individual, options.hasAudio, options.hasVideo, options.manual, options.layout)
        // One archive at a time per session, or one per tag: claimed before anything starts.
        let claimed = archives.withLock { a -> Bool in
            guard !a.values.contains(where: { $0.sessionID == sessionID && $0.excludes(tag: options.multiArchiveTag) }) else { return false }
            let now = Self.millis()
            let composedVideo = !individual && hasVideo
            a[id] = Archive(id: id, sessionID: sessionID, projectID: projectID, name: name, createdAt: now, status: .started, reason: "",
                            recordingID: "", duration: 0, size: 0, updatedAt: now, outputMode: individual ? "individual" : nil,
                            hasAudio: hasAudio, hasVideo: hasVideo,
                            streams: manual ? [] : nil, resolution: composedVideo ? options.resolution : nil,
                            maxBitrate: composedVideo ? options.maxBitrate : nil,
                            quantizationParameter: composedVideo ? options.quantizationParameter : nil, multiArchiveTag: options.multiArchiveTag,
                            automatic: options.automatic ? true : nil)
            return true
        }
        guard claimed else { throw .alreadyRecording }
        guard let archive = get(id) else { throw .notFound }
        // Written before anything records: an archive whose start is acknowledged is one that survives a restart.
        guard Self.save(archive, directory: directory) else {
            _ = archives.withLock { $0.removeValue(forKey: id) }
            throw .storage
        }
        // A composed archive's audio: the session's mix, held for it until it ends (`ended`).
        let mix: HeldMix?
        do {
            mix = !individual && hasAudio ? try await hub.holdAudioMix(sessionID: sessionID, holder: Self.holder(id), hearing: manual ? [] : nil) : nil
        } catch {
            _ = archives.withLock { $0.removeValue(forKey: id) }
            throw .media("\(error)")
        }
        let (hub, engine, directory) = (hub, engine, directory)
        layouts.withLock { $0[id] = layout }
        let initial = archive.selection
        let selection: @Sendable () -> StreamSelection = { [weak self] in self?.get(id)?.selection ?? initial }
        // A recording that ends by itself (its maximum duration, nobody publishing in its first minute, or a
        // failure) is reported here; `ended` moves the archive on once, whichever of this and `stop` comes first.
        let recorder = ArchiveRecorder(maxDuration: .seconds(maxDuration), publishWithin: Self.publishWithin, ended: { [weak self] outcome, ending in
            guard let self else { return }
            _ = self.recorders.withLock { $0.removeValue(forKey: id) }
            Task {
                await self.ended(id, outcome, reason: ending?.reason ?? "")
                // An automatically archived session goes on being recorded, in the next archive.
                if options.automatic, ending == .maxDuration, outcome.failure == nil, !self.hub.connections(sessionID: sessionID).isEmpty {
                    _ = try? await self.start(sessionID: sessionID, projectID: projectID, options)
                }
            }
        }, record: { shouldStop in
            // `paused` while nobody publishes, `started` again when someone does (saved and reported as any change).
            let paused: @Sendable (Bool) -> Void = { [weak self] now in
                self?.update(id, if: { $0.recording && ($0.status == .paused) != now }) { $0.status = now ? .paused : .started }
            }
            return individual
                ? await IndividualArchive.record(id: id, sessionID: sessionID, name: name, createdAt: archive.createdAt, directory: directory,
                                                 hub: hub, selection: selection, paused: paused, shouldStop: shouldStop)
                : await ComposedArchive.record(holder: Self.holder(id), sessionID: sessionID, outputs: [.mp4(path: directory + "/" + id + ".mp4")],
                                               hub: hub, engine: engine,
                                               canvas: hasVideo ? archive.canvas : nil, mix: mix,
                                               selection: selection, layout: { [weak self] in self?.layout(id) ?? layout },
                                               paused: paused, shouldStop: shouldStop)
        })
        recorders.withLock { $0[id] = recorder }
        guard let started = update(id, { _ in }) else { throw .notFound }
        return started
    }

    /// A client must publish within a minute of an archive's start, or it stops (as the Video API's do).
    static let publishWithin: Duration = .seconds(60)

    /// A stream was published in a session archived automatically (`archiveMode: always`): unless one of its
    /// archives is recording, its composed archive starts, with the session's archive name and resolution.
    func startAutomatically(_ session: VideoSession) async {
        var options = Options(name: session.archiveName ?? "", hasVideo: true, automatic: true)
        options.resolution = session.archiveResolution ?? options.resolution
        _ = try? await start(sessionID: session.id, projectID: session.owner, options)
    }

    /// Chooses a stream for a recording archive in manual stream mode (again: with other media), or leaves it
    /// out from now on; the stream must be one of the session's (to add) or one chosen (to remove).
    func changeStreams(_ id: String, _ change: StreamChange) async throws(Failure) {
        guard let archive = get(id) else { throw .notFound }
        guard archive.manual else { throw .autoStreamMode }
        guard archive.recording else { throw .notRecording }
        if let stream = change.refusal(live: hub.streams(sessionID: archive.sessionID).map(\.id), chosen: archive.streams ?? []) {
            throw .noStream(stream)
        }
        let changed = try commit(id) { a in change.apply(to: &a.streams!) }
        guard !changed.individual, changed.hasAudio ?? true else { return }
        do {
            try await hub.followMixHearing(sessionID: changed.sessionID, holder: Self.holder(id)) {
                get(id).flatMap { $0.recording ? $0.selection.heard : nil }
            }
        } catch {
            throw .media("\(error)")
        }
    }

    /// Stops a recording archive; returns it once its file is complete.
    func stop(_ id: String) async throws(Failure) -> Archive {
        guard let archive = get(id) else { throw .notFound }
        guard archive.recording, let recorder = recorders.withLock({ $0.removeValue(forKey: id) }) else { throw .notRecording }
        await ended(id, await recorder.stop(), reason: "user initiated")
        return get(id) ?? archive
    }

    /// The last client left the session: its archives, paused, stop a minute later (`session ended`), unless a
    /// client came back (`SessionLinger`).
    func sessionEnded(_ sessionID: String) async {
        guard archives.withLock({ a in a.values.contains { $0.sessionID == sessionID && $0.recording } }),
              await linger.waitOut(sessionID) else { return }
        let recording = archives.withLock { a in a.values.filter { $0.sessionID == sessionID && $0.recording } }
        for archive in recording {
            if let recorder = recorders.withLock({ $0.removeValue(forKey: archive.id) }) {
                await ended(archive.id, await recorder.stop(), reason: "session ended")
            }
        }
    }

    /// The layout of a composed archive with video that is recording.
    func layout(_ id: String) -> ArchiveLayout? { layouts.withLock { $0[id] } }

    /// Changes how a recording composed archive with video lays its streams out, from its next picture.
    func setLayout(_ id: String, _ layout: ArchiveLayout) throws(Failure) {
        guard let archive = get(id) else { throw .notFound }
        guard archive.recording, !archive.individual, archive.hasVideo == true else { throw .notRecording }
        layouts.withLock { $0[id] = layout }
    }

    /// An `ArchiveRecorder`'s recording ended: available with its file, or failed; a composed one lets the
    /// session's mix go.
    private func ended(_ id: String, _ outcome: ArchiveRecorder.Outcome, reason: String) async {
        layouts.withLock { $0[id] = nil }
        let moved = update(id, if: \.recording) { a in
            a.duration = outcome.duration
            a.size = outcome.size
            a.file = outcome.file
            if let failure = outcome.failure {
                a.status = .failed
                a.reason = "the recording failed: \(failure)"
            } else {
                a.status = .available
                a.reason = reason
            }
        }
        if let moved, !moved.individual { await hub.releaseAudioMix(sessionID: moved.sessionID, holder: Self.holder(id)) }
    }

    func get(_ id: String) -> Archive? { archives.withLock { $0[id] } }

    /// The project's archives, newest first, optionally of one session.
    func list(projectID: String, sessionID: String?) -> [Archive] {
        archives.withLock { a in
            a.values.filter { $0.projectID == projectID && (sessionID == nil || $0.sessionID == sessionID) }
                .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        }
    }

    /// Deletes an archive that is not recording, with its file.
    func delete(_ id: String) async throws(Failure) {
        guard let archive = get(id) else { throw .notFound }
        guard !archive.recording else { throw .recording }
        let recording = RecordingID(rawValue: archive.recordingID)
        if recording.isWellFormed { _ = await recordings.delete(recording) }
        if archive.recordsItself {
            if let file = archive.file { try? FileManager.default.removeItem(atPath: file) }
            try? FileManager.default.removeItem(atPath: directory + "/" + id)
        }
        _ = archives.withLock { $0.removeValue(forKey: id) }
        try? FileManager.default.removeItem(atPath: directory + "/" + id + ".json")
    }

    /// The finished file of an available archive.
    func file(_ id: String) async -> String? {
        guard let archive = get(id), archive.status == .available else { return nil }
        if archive.recordsItself { return archive.file }
        return await recordings.path(RecordingID(rawValue: archive.recordingID))
    }

    /// Changes a recording archive as a client asked: saved before the client hears of it, or (when it cannot be
    /// written) undone and `storage` thrown, so a change acknowledged is one that survives a restart.
    private func commit(_ id: String, _ change: (inout Archive) -> Void) throws(Failure) -> Archive {
        guard let (before, after) = apply(id, if: \.recording, change) else { throw .notRecording }
        guard Self.save(after, directory: directory) else {
            archives.withLock { if $0[id] == after { $0[id] = before } }
            throw .storage
        }
        changed(after)
        return after
    }

    /// Changes an archive in memory when `condition` holds, in one step under the lock; the archive before and after.
    private func apply(_ id: String, if condition: (Archive) -> Bool, _ change: (inout Archive) -> Void) -> (before: Archive, after: Archive)? {
        archives.withLock { a in
            guard var archive = a[id], condition(archive) else { return nil }
            let before = archive
            change(&archive)
            archive.updatedAt = Self.millis()
            a[id] = archive
            return (before, archive)
        }
    }

    /// Changes an archive (when `condition` holds), saves it and reports it; the archive changed, or nil.
    @discardableResult
    private func update(_ id: String, if condition: (Archive) -> Bool = { _ in true }, _ change: (inout Archive) -> Void) -> Archive? {
        let updated = apply(id, if: condition, change)?.after
        if let updated {
            Self.save(updated, directory: directory)
            changed(updated)
        }
        return updated
    }

    /// Writes an archive's metadata (the directory made again if it went); false when it could not be written.
    @discardableResult
    private static func save(_ archive: Archive, directory: String) -> Bool { saveJSON(archive, id: archive.id, directory: directory) }

    /// Writes the metadata of an archive or a broadcast as `<id>.json` (the directory made again if it went);
    /// false when it could not be written.
    static func saveJSON(_ value: some Encodable, id: String, directory: String) -> Bool {
        guard let data = try? JSONEncoder().encode(value) else { return false }
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return (try? data.write(to: URL(fileURLWithPath: directory + "/" + id + ".json"), options: .atomic)) != nil
    }

    /// What an archive's recording is known by to the media engine: the mix it holds, its mixer and producer taps.
    static func holder(_ id: String) -> String { "archive-" + id }
    static func millis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
