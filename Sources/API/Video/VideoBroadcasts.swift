import Crypto
import Foundation
import Live
import Media
import Synchronization
import VideoCodec

/// Live-streaming broadcasts of video sessions, as the Video API's: the session composed as a composed archive
/// is (`ComposedArchive`: the audio mix and the streams laid out on one canvas, H.264 and AAC), encoded once
/// and sent to an HLS playlist this server serves (`live.m3u8` and its segments under
/// `<data>/video/broadcasts/<id>/`, a sliding window of six segments, or of two hours with `dvr`) and to up to five RTMP or
/// RTMPS servers (`MediaWriter`: each from a thread of its own, connecting again when it loses its server, its
/// status in the broadcast object). Of every stream (`streamMode: auto`) or of those chosen (`manual`).
///
/// A broadcast's metadata is a JSON file beside the HLS directories, written before its start is acknowledged;
/// one still running when the server stopped is `stopped` at the next start. It stops when asked, at its
/// `maxDuration`, or a minute after the session's last client left (unless one came back); its HLS files are
/// deleted a minute after it stops, so a player can finish what it fetched. Each change of its status or of an
/// output's goes to `changed` (the application's `broadcast_status` callback).
final class VideoBroadcasts: Sendable {
    struct RTMPTarget: Codable, Sendable, Equatable {
        var id: String?
        var serverUrl: String
        var streamName: String

        var url: String { serverUrl.hasSuffix("/") ? serverUrl + streamName : serverUrl + "/" + streamName }
    }

    struct Broadcast: Codable, Sendable, Equatable {
        enum Status: String, Codable, Sendable { case started, stopped }
        var id: String
        var sessionID: String
        var projectID: String
        var createdAt: Int64
        var updatedAt: Int64
        var status: Status
        var hasAudio: Bool
        var hasVideo: Bool
        var resolution: String
        var maxBitrate: Int?
        var maxDuration: Int
        var multiBroadcastTag: String?
        /// An HLS output, and whether it keeps two hours of segments (`dvr`) rather than six, or is low-latency
        /// HLS (partial segments; nil in metadata written before it was served).
        var hls: Bool
        var dvr: Bool
        var lowLatency: Bool?
        var rtmp: [RTMPTarget]
        /// In manual stream mode, the streams chosen so far; nil in auto.
        var streams: [ChosenStream]?

        var manual: Bool { streams != nil }
        var selection: StreamSelection {
            StreamSelection(kinds: Set((hasAudio ? [MediaKind.audio] : []) + (hasVideo ? [.video] : [])), chosen: streams)
        }
        var canvas: ArchiveCanvas { ArchiveCanvas(resolution: resolution, maxBitrate: maxBitrate) ?? .standard }

        /// Whether this broadcast, running, keeps one with `tag` from broadcasting the same session.
        func excludes(tag: String?) -> Bool { status == .started && (tag == nil || multiBroadcastTag == nil || tag == multiBroadcastTag) }

        /// The Video API's broadcast object: `hlsURL` where its playlist is, `statuses` of its outputs (HLS first,
        /// then each RTMP server) while it runs.
        func json(hlsURL: String, statuses: [MediaWriter.OutputStatus]?) -> [String: Any] {
            let outputStatus = { (i: Int) -> String in
                self.status == .stopped ? "ended" : statuses.flatMap { i < $0.count ? $0[i].rawValue : nil } ?? "connecting"
            }
            var urls: [String: Any] = [:]
            if hls {
                urls["hls"] = hlsURL
                urls["hlsStatus"] = outputStatus(0)
            }
            urls["rtmp"] = rtmp.enumerated().map { i, target in
                ["id": target.id ?? "", "serverUrl": target.serverUrl, "streamName": target.streamName, "status": outputStatus(i + (hls ? 1 : 0))]
            }
            var object: [String: Any] = [
                "id": id, "sessionId": sessionID, "projectId": projectID, "createdAt": createdAt, "updatedAt": updatedAt,
                "status": status.rawValue, "hasAudio": hasAudio, "hasVideo": hasVideo, "resolution": resolution, "maxDuration": maxDuration,
                "streamMode": manual ? "manual" : "auto", "broadcastUrls": urls, "event": "broadcast",
                "streams": status == .started ? (streams ?? []).map(\.json) : [],
            ]
            if hls { object["settings"] = ["hls": ["dvr": dvr, "lowLatency": lowLatency == true]] }
            if let maxBitrate { object["maxBitrate"] = maxBitrate }
            if let multiBroadcastTag { object["multiBroadcastTag"] = multiBroadcastTag }
            return object
        }

        /// The outputs a broadcast writes, HLS first (low-latency HLS telling `progress` how far it is); RTMPS
        /// servers' certificates checked against `trusting`.
        func outputs(directory: String, trusting: String? = nil, progress: HLSProgress = HLSProgress()) -> [MediaWriter.Output] {
            let hlsOutput: MediaWriter.Output = lowLatency == true ? .lowLatencyHLS(directory: directory + "/" + id, progress: progress)
                : .hls(directory: directory + "/" + id, dvr: dvr)
            return (hls ? [hlsOutput] : []) + rtmp.map { .rtmp(url: $0.url, trusting: trusting) }
        }
    }

    /// What a broadcast sends and how; `hls` and `rtmp` are its outputs (at least one).
    struct Options: Sendable {
        var hasAudio = true
        var hasVideo = true
        var manual = false
        var layout = ArchiveLayout()
        var resolution = ArchiveCanvas.standard.resolution
        var maxBitrate: Int?
        var maxDuration = 14_400
        var multiBroadcastTag: String?
        var hls = false
        var dvr = false
        var lowLatency = false
        var rtmp: [RTMPTarget] = []
    }

    enum Failure: Error {
        case alreadyBroadcasting
        case noClients
        case media(String)
        case notFound
        case notBroadcasting
        case autoStreamMode
        case noStream(String)
        case storage
    }

    static let maxDurations = 60...36_000
    static let maxRTMPTargets = 5
    /// How long a broadcast's HLS files are kept after it stopped, so a player can finish what it fetched.
    static let filesLinger: Duration = .seconds(60)

    let directory: String
    let hub: VideoHub
    private let linger: SessionLinger
    let engine: MediaEngine
    /// The CA file RTMPS servers' certificates must chain to (`--rtmps-ca`; nil: the system store).
    let rtmpsCA: String?
    private let broadcasts: Mutex<[String: Broadcast]>
    private let recorders = Mutex<[String: ArchiveRecorder]>([:])
    private let layouts = Mutex<[String: ArchiveLayout]>([:])
    /// Each running broadcast's outputs' statuses, as its recording last saw them.
    private let statuses = Mutex<[String: [MediaWriter.OutputStatus]]>([:])
    /// How far each low-latency HLS output is, while its files are served.
    private let progress = Mutex<[String: HLSProgress]>([:])
    /// Called with a broadcast and its outputs' statuses (nil: not seen yet) when it starts, when an output's
    /// status changes while it runs, and when it stops.
    private let changed: @Sendable (Broadcast, [MediaWriter.OutputStatus]?) -> Void

    init(directory: String, hub: VideoHub, engine: MediaEngine, rtmpsCA: String? = nil,
         changed: @escaping @Sendable (Broadcast, [MediaWriter.OutputStatus]?) -> Void = { _, _ in }) {
        self.directory = directory
        self.changed = changed
        self.rtmpsCA = rtmpsCA
        self.hub = hub
        linger = SessionLinger(hub: hub)
        self.engine = engine
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var loaded: [String: Broadcast] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = directory + "/" + name
            guard name.hasSuffix(".json") else {
                // HLS files of broadcasts that ran before the server stopped.
                try? FileManager.default.removeItem(atPath: path)
                continue
            }
            guard let data = FileManager.default.contents(atPath: path), var broadcast = try? JSONDecoder().decode(Broadcast.self, from: data) else { continue }
            if broadcast.status == .started {
                broadcast.status = .stopped
                Self.save(broadcast, directory: directory)
            }
            loaded[broadcast.id] = broadcast
        }
        broadcasts = Mutex(loaded)
    }

    /// Starts broadcasting a session that has clients: its metadata saved, then its outputs opened as its
    /// recording starts (RTMP servers connect in the background; their statuses say when they are live).
    func start(sessionID: String, projectID: String, _ options: Options) async throws(Failure) -> Broadcast {
        guard !hub.connections(sessionID: sessionID).isEmpty else { throw .noClients }
        let id = UUID4.generate()
        let claimed = broadcasts.withLock { b -> Broadcast? in
            guard !b.values.contains(where: { $0.sessionID == sessionID && $0.excludes(tag: options.multiBroadcastTag) }) else { return nil }
            let now = VideoArchives.millis()
            let broadcast = Broadcast(id: id, sessionID: sessionID, projectID: projectID, createdAt: now, updatedAt: now, status: .started,
                                      hasAudio: options.hasAudio, hasVideo: options.hasVideo, resolution: options.resolution,
                                      maxBitrate: options.maxBitrate, maxDuration: options.maxDuration, multiBroadcastTag: options.multiBroadcastTag,
                                      hls: options.hls, dvr: options.dvr, lowLatency: options.hls && options.lowLatency ? true : nil,
                                      rtmp: options.rtmp, streams: options.manual ? [] : nil)
            b[id] = broadcast
            return broadcast
        }
        guard let broadcast = claimed else { throw .alreadyBroadcasting }
        guard Self.save(broadcast, directory: directory) else {
            _ = broadcasts.withLock { $0.removeValue(forKey: id) }
            throw .storage
        }
        let mix: HeldMix?
        do {
            if broadcast.hls { try FileManager.default.createDirectory(atPath: directory + "/" + id, withIntermediateDirectories: true) }
            mix = options.hasAudio ? try await hub.holdAudioMix(sessionID: sessionID, holder: Self.holder(id), hearing: options.manual ? [] : nil) : nil
        } catch {
            _ = broadcasts.withLock { $0.removeValue(forKey: id) }
            try? FileManager.default.removeItem(atPath: directory + "/" + id + ".json")
            throw .media("\(error)")
        }
        let hlsProgress = HLSProgress()
        let (hub, engine, layout, outputs) = (hub, engine, options.layout, broadcast.outputs(directory: directory, trusting: rtmpsCA, progress: hlsProgress))
        layouts.withLock { $0[id] = layout }
        if broadcast.lowLatency == true { progress.withLock { $0[id] = hlsProgress } }
        let selection: @Sendable () -> StreamSelection = { [weak self] in self?.get(id)?.selection ?? broadcast.selection }
        changed(broadcast, nil)  // before its recording can report an output's status
        let recorder = ArchiveRecorder(maxDuration: .seconds(broadcast.maxDuration), ended: { [weak self] _, _ in
            guard let self else { return }
            _ = self.recorders.withLock { $0.removeValue(forKey: id) }
            Task { await self.ended(id) }
        }, record: { shouldStop in
            await ComposedArchive.record(holder: Self.holder(id), sessionID: sessionID, outputs: outputs,
                                         hub: hub, engine: engine, canvas: broadcast.hasVideo ? broadcast.canvas : nil, mix: mix,
                                         selection: selection, layout: { [weak self] in self?.layouts.withLock { $0[id] } ?? layout },
                                         watch: { [weak self] now in self?.watched(id, now) }, shouldStop: shouldStop)
        })
        recorders.withLock { $0[id] = recorder }
        return broadcast
    }

    /// A running broadcast's outputs' statuses changed: kept for its object, and reported while it runs when its
    /// object shows a change — not seen yet reads `connecting` — (their closing, `ended` all, is reported as the
    /// broadcast's stop).
    private func watched(_ id: String, _ now: [MediaWriter.OutputStatus]) {
        let before = statuses.withLock { s in
            defer { s[id] = now }
            return s[id] ?? Array(repeating: .connecting, count: now.count)
        }
        guard now != before, !now.contains(.ended), let broadcast = get(id), broadcast.status == .started else { return }
        changed(broadcast, now)
    }

    /// Chooses a stream for a running broadcast in manual stream mode (again: with other media), or leaves one out.
    func changeStreams(_ id: String, _ change: StreamChange) async throws(Failure) {
        guard let broadcast = get(id) else { throw .notFound }
        guard broadcast.manual else { throw .autoStreamMode }
        guard broadcast.status == .started else { throw .notBroadcasting }
        if let stream = change.refusal(live: hub.streams(sessionID: broadcast.sessionID).map(\.id), chosen: broadcast.streams ?? []) {
            throw .noStream(stream)
        }
        // Saved before it is acknowledged; undone when it cannot be.
        let applied = broadcasts.withLock { b -> (before: Broadcast, after: Broadcast)? in
            guard var now = b[id], now.status == .started else { return nil }
            let before = now
            change.apply(to: &now.streams!)
            now.updatedAt = VideoArchives.millis()
            b[id] = now
            return (before, now)
        }
        guard let (before, changed) = applied else { throw .notBroadcasting }
        guard Self.save(changed, directory: directory) else {
            broadcasts.withLock { if $0[id] == changed { $0[id] = before } }
            throw .storage
        }
        guard changed.hasAudio else { return }
        do {
            try await hub.followMixHearing(sessionID: changed.sessionID, holder: Self.holder(id)) {
                get(id).flatMap { $0.status == .started ? $0.selection.heard : nil }
            }
        } catch {
            throw .media("\(error)")
        }
    }

    /// Stops a running broadcast; returns it once its outputs are closed.
    func stop(_ id: String) async throws(Failure) -> Broadcast {
        guard let broadcast = get(id) else { throw .notFound }
        guard broadcast.status == .started, let recorder = recorders.withLock({ $0.removeValue(forKey: id) }) else { throw .notBroadcasting }
        _ = await recorder.stop()
        await ended(id)
        return get(id) ?? broadcast
    }

    /// The session's last client left: its broadcasts stop a minute later, unless a client came back (`SessionLinger`).
    func sessionEnded(_ sessionID: String) async {
        guard broadcasts.withLock({ b in b.values.contains { $0.sessionID == sessionID && $0.status == .started } }),
              await linger.waitOut(sessionID) else { return }
        let running = broadcasts.withLock { b in b.values.filter { $0.sessionID == sessionID && $0.status == .started }.map(\.id) }
        for id in running { _ = try? await stop(id) }
    }

    /// Changes how a running broadcast with video lays its streams out, from its next picture.
    func setLayout(_ id: String, _ layout: ArchiveLayout) throws(Failure) {
        guard let broadcast = get(id) else { throw .notFound }
        guard broadcast.status == .started, broadcast.hasVideo else { throw .notBroadcasting }
        layouts.withLock { $0[id] = layout }
    }

    /// A broadcast's recording ended: stopped, its mix let go, its HLS files deleted a minute later.
    private func ended(_ id: String) async {
        layouts.withLock { $0[id] = nil }
        statuses.withLock { $0[id] = nil }
        let stopped = broadcasts.withLock { b -> Broadcast? in
            guard var broadcast = b[id], broadcast.status == .started else { return nil }
            broadcast.status = .stopped
            broadcast.updatedAt = VideoArchives.millis()
            b[id] = broadcast
            return broadcast
        }
        guard let stopped else { return }
        Self.save(stopped, directory: directory)
        changed(stopped, nil)
        if stopped.hasAudio { await hub.releaseAudioMix(sessionID: stopped.sessionID, holder: Self.holder(id)) }
        if stopped.hls {
            let files = directory + "/" + id
            Task {
                try? await Task.sleep(for: Self.filesLinger)
                try? FileManager.default.removeItem(atPath: files)
                _ = progress.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    func get(_ id: String) -> Broadcast? { broadcasts.withLock { $0[id] } }

    /// A running broadcast's outputs' statuses (nil before its recording saw them, or once it stopped).
    func statuses(_ id: String) -> [MediaWriter.OutputStatus]? { statuses.withLock { $0[id] } }

    /// The project's broadcasts, newest first, optionally of one session.
    func list(projectID: String, sessionID: String?) -> [Broadcast] {
        broadcasts.withLock { b in
            b.values.filter { $0.projectID == projectID && (sessionID == nil || $0.sessionID == sessionID) }
                .sorted { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
        }
    }

    /// Where a file of a broadcast's HLS output is — its playlist or one of its segments, while it runs or lingers
    /// — for a name that is served (nil otherwise); the caller reads it, or finds it gone.
    func hlsFile(_ id: String, _ name: String) -> String? {
        guard let broadcast = get(id), broadcast.hls, Self.isHLSName(name) else { return nil }
        return directory + "/" + id + "/" + name
    }

    /// How far a low-latency HLS broadcast's playlist is, while its files are served (nil for any other).
    func hlsProgress(_ id: String) -> HLSProgress? { progress.withLock { $0[id] } }

    /// `live.m3u8`, `segment-<n>.ts` or a part, `segment-<n>.<p>.ts`: nothing else is served from a broadcast's directory.
    static func isHLSName(_ name: String) -> Bool {
        name == MediaWriter.Output.playlist || LowLatencyPlaylist.file(named: name) != nil
    }

    @discardableResult
    private static func save(_ broadcast: Broadcast, directory: String) -> Bool {
        VideoArchives.saveJSON(broadcast, id: broadcast.id, directory: directory)
    }

    static func holder(_ id: String) -> String { "broadcast-" + id }
}
