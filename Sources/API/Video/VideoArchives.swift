import Crypto
import Foundation
import Live
import Media
import Runtime
import Synchronization
import Wire

/// Archives of video sessions. Composed ones without video are the session's audio mix (the Audio Connector's)
/// recorded as Ogg Opus, 48 kHz mono, by the same recorder as conversations' recordings; with video, every
/// stream laid out on one canvas and the mix, in a WebM file (`ComposedArchive`). Individual-stream ones are a
/// WebM file per stream (VP8 and Opus as published, nothing re-encoded) in a ZIP with a JSON manifest
/// (`IndividualArchive`). An archive's metadata is a
/// JSON file under `<data>/video/archives/`, written before each reply, so what a reply said survives a
/// restart; an archive still recording when the server stopped is `failed` at the next start, its audio
/// up to then kept.
final class VideoArchives: Sendable {
    struct Archive: Codable, Sendable, Equatable {
        enum Status: String, Codable, Sendable { case started, available, failed }
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
        /// Absent from the metadata of audio-only composed archives: the output mode, what is recorded, and the
        /// file written by an `ArchiveRecorder` (a ZIP, or a composed WebM).
        var outputMode: String?
        var hasAudio: Bool?
        var hasVideo: Bool?
        var file: String?

        var individual: Bool { outputMode == "individual" }
        /// Recorded by an `ArchiveRecorder` (individual, or composed with video), not by `Recordings`.
        var recordsItself: Bool { individual || hasVideo == true }
        var contentType: String { individual ? "application/zip" : hasVideo == true ? "video/webm" : "audio/ogg" }
        var fileExtension: String { individual ? "zip" : hasVideo == true ? "webm" : "ogg" }

        /// The Video API's archive object; `url` where the file is, once available.
        func json(url: String?) -> [String: Any] {
            ["id": id, "sessionId": sessionID, "projectId": projectID, "partnerId": projectID, "name": name, "createdAt": createdAt, "updatedAt": updatedAt,
             "status": status.rawValue, "reason": reason, "duration": duration, "size": size, "hasAudio": hasAudio ?? true,
             "hasVideo": hasVideo ?? false, "outputMode": outputMode ?? "composed", "streamMode": "auto",
             "resolution": !individual && hasVideo == true ? ComposedArchive.resolution as Any : NSNull(), "event": "archive",
             "url": status == .available ? url.map { $0 as Any } ?? NSNull() : NSNull(), "streams": [Any](), "sha256sum": "", "password": ""]
        }
    }

    let directory: String
    let hub: VideoHub
    let recordings: Recordings
    private let archives: Mutex<[String: Archive]>
    /// Why archives being stopped by the server stop (`session ended`), for whichever reports their end.
    private let stopping = Mutex<[String: String]>([:])
    /// Archives being recorded by an `ArchiveRecorder`.
    private let recorders = Mutex<[String: ArchiveRecorder]>([:])
    /// How each composed archive with video lays its streams out, while it records (`setLayout` changes it).
    private let layouts = Mutex<[String: ArchiveLayout]>([:])
    let engine: MediaEngine
    /// Called after every change of an archive's status (the `archive_status` callback).
    let changed: @Sendable (Archive) -> Void

    init(directory: String, hub: VideoHub, recordings: Recordings, changed: @escaping @Sendable (Archive) -> Void = { _ in }) {
        self.directory = directory
        self.hub = hub
        self.recordings = recordings
        engine = recordings.engine
        self.changed = changed
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var loaded: [String: Archive] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name.hasSuffix(".json") {
            guard let data = FileManager.default.contents(atPath: directory + "/" + name),
                  var archive = try? JSONDecoder().decode(Archive.self, from: data) else { continue }
            if archive.status == .started {
                archive.status = .failed
                archive.reason = "the server stopped while it was recording"
                Self.save(archive, directory: directory)
            }
            loaded[archive.id] = archive
        }
        archives = Mutex(loaded)
    }

    enum Failure: Error {
        case alreadyRecording
        case noClients
        case media(String)
        case notFound
        case notRecording
        case recording
    }

    /// Starts recording: the session's mix (composed; with video, its streams laid out too), or each of its streams
    /// (individual), with the kinds of media asked for.
    func start(sessionID: String, projectID: String, name: String, individual: Bool = false, hasAudio: Bool = true,
               hasVideo: Bool = false, layout: ArchiveLayout = ArchiveLayout()) async throws(Failure) -> Archive {
        guard !hub.connections(sessionID: sessionID).isEmpty else { throw .noClients }
        let id = UUID4.generate()
        // One archive at a time per session: claimed before anything starts.
        let claimed = archives.withLock { a -> Bool in
            guard !a.values.contains(where: { $0.sessionID == sessionID && $0.status == .started }) else { return false }
            let now = Self.millis()
            a[id] = Archive(id: id, sessionID: sessionID, projectID: projectID, name: name, createdAt: now, status: .started, reason: "",
                            recordingID: "", duration: 0, size: 0, updatedAt: now, outputMode: individual ? "individual" : nil,
                            hasAudio: individual || hasVideo ? hasAudio : nil, hasVideo: individual || hasVideo ? hasVideo : nil)
            return true
        }
        guard claimed else { throw .alreadyRecording }
        if let archive = get(id), archive.recordsItself {
            let (hub, engine, directory) = (hub, engine, directory)
            layouts.withLock { $0[id] = layout }
            let kinds = Set((hasAudio ? [MediaKind.audio] : []) + (hasVideo ? [.video] : []))
            // A recording that ends by itself (its maximum duration, or a failure as it starts) is reported here;
            // `ended` moves the archive on once, whichever of this and `stop` comes first.
            let recorder = ArchiveRecorder(ended: { [weak self] outcome in
                guard let self else { return }
                _ = self.recorders.withLock { $0.removeValue(forKey: id) }
                self.ended(id, outcome, reason: "maximum duration exceeded")
            }, record: { shouldStop in
                individual
                    ? await IndividualArchive.record(id: id, sessionID: sessionID, name: name, createdAt: archive.createdAt, directory: directory,
                                                     hub: hub, kinds: kinds, shouldStop: shouldStop)
                    : await ComposedArchive.record(id: id, sessionID: sessionID, directory: directory, hub: hub, engine: engine,
                                                   hasAudio: hasAudio, layout: { [weak self] in self?.layout(id) ?? layout },
                                                   shouldStop: shouldStop)
            })
            recorders.withLock { $0[id] = recorder }
            guard let started = update(id, { _ in }) else { throw .notFound }
            return started
        }
        let recording: RecordingInfo
        do {
            let mix = try await hub.holdAudioMix(sessionID: sessionID, holder: Self.holder(id))
            do {
                recording = try await recordings.start(mixer: mix, source: sessionID, applicationID: projectID,
                                                       options: RecordingOptions(format: .ogg, timeOut: 7200)) { [weak self] info in
                    Task { await self?.ended(id, info) }
                }
            } catch {
                await hub.releaseAudioMix(sessionID: sessionID, holder: Self.holder(id))
                throw error
            }
        } catch {
            _ = archives.withLock { $0.removeValue(forKey: id) }
            throw .media("\(error)")
        }
        let started = update(id) { $0.recordingID = recording.id.rawValue }
        guard let started else { throw .notFound }
        return started
    }

    /// Stops a recording archive; returns it once its file is complete.
    func stop(_ id: String) async throws(Failure) -> Archive {
        guard let archive = get(id) else { throw .notFound }
        if archive.recordsItself {
            guard archive.status == .started, let recorder = recorders.withLock({ $0.removeValue(forKey: id) }) else { throw .notRecording }
            ended(id, await recorder.stop(), reason: "user initiated")
            return get(id) ?? archive
        }
        let recording = RecordingID(rawValue: archive.recordingID)
        guard archive.status == .started, recording.isWellFormed else { throw .notRecording }
        if let info = await recordings.stop(recording) { await ended(id, info) }
        return get(id) ?? archive
    }

    /// The last client left the session: its archive stops (`session ended`).
    func sessionEnded(_ sessionID: String) async {
        let recording = archives.withLock { a in a.values.filter { $0.sessionID == sessionID && $0.status == .started } }
        for archive in recording {
            if archive.recordsItself {
                if let recorder = recorders.withLock({ $0.removeValue(forKey: archive.id) }) {
                    ended(archive.id, await recorder.stop(), reason: "session ended")
                }
                continue
            }
            stopping.withLock { $0[archive.id] = "session ended" }
            if let info = await recordings.stop(RecordingID(rawValue: archive.recordingID)) { await ended(archive.id, info) }
        }
    }

    /// The recording ended (stopped, timed out, the session's media closed): the archive is available, or failed.
    /// Both `stop` and the recorder report the end: the first one moves the archive on (in one step under the
    /// lock, so the second finds it moved and the status changes once), then lets the session's mix go.
    private func ended(_ id: String, _ info: RecordingInfo) async {
        let reason = stopping.withLock { $0[id] }
        let moved = update(id, if: { $0.status == .started }) { a in
            a.duration = Int(info.duration.rounded())
            a.size = info.size
            switch info.status {
            case .completed:
                a.status = .available
                a.reason = reason ?? (info.endReason == .timeout ? "maximum duration exceeded" : info.endReason == .mixerClosed ? "session ended" : "user initiated")
            default:
                a.status = .failed
                a.reason = "the recording failed"
            }
        }
        guard let moved else { return }
        stopping.withLock { $0[id] = nil }
        await hub.releaseAudioMix(sessionID: moved.sessionID, holder: Self.holder(id))
    }

    /// The layout of a composed archive with video that is recording.
    func layout(_ id: String) -> ArchiveLayout? { layouts.withLock { $0[id] } }

    /// Changes how a recording composed archive with video lays its streams out, from its next picture.
    func setLayout(_ id: String, _ layout: ArchiveLayout) throws(Failure) {
        guard let archive = get(id) else { throw .notFound }
        guard archive.status == .started, !archive.individual, archive.hasVideo == true else { throw .notRecording }
        layouts.withLock { $0[id] = layout }
    }

    /// An `ArchiveRecorder`'s recording ended: available with its file, or failed.
    private func ended(_ id: String, _ outcome: ArchiveRecorder.Outcome, reason: String) {
        layouts.withLock { $0[id] = nil }
        update(id, if: { $0.status == .started }) { a in
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
        guard archive.status != .started else { throw .recording }
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

    /// Changes an archive (when `condition` holds), saves it and reports it; the archive changed, or nil.
    @discardableResult
    private func update(_ id: String, if condition: (Archive) -> Bool = { _ in true }, _ change: (inout Archive) -> Void) -> Archive? {
        let updated = archives.withLock { a -> Archive? in
            guard var archive = a[id], condition(archive) else { return nil }
            change(&archive)
            archive.updatedAt = Self.millis()
            a[id] = archive
            return archive
        }
        if let updated {
            Self.save(updated, directory: directory)
            changed(updated)
        }
        return updated
    }

    private static func save(_ archive: Archive, directory: String) {
        guard let data = try? JSONEncoder().encode(archive) else { return }
        try? data.write(to: URL(fileURLWithPath: directory + "/" + archive.id + ".json"), options: .atomic)
    }

    private static func holder(_ id: String) -> String { "archive-" + id }
    static func millis() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}
