import Foundation
import Live
import Media
import Wire

/// An individual-stream archive being recorded: one `StreamRecorder` (a WebM file, Matroska for H.264) per
/// stream of the session, those published when it starts and any published later, each polled every 100 ms
/// until its stream ends or the archive stops. In manual stream mode, a file per chosen stream, ended when the
/// stream is left out, and a new one (`<stream id>-2.webm`, …) when it is chosen again or with other media;
/// then a ZIP (stored, not compressed: compressed video does not compress further) of the files and a JSON
/// manifest, `<archive id>.json`, naming each file with its stream, connection data and
/// offsets from the archive's start, as the Video API's individual archives do. Paused while nobody publishes
/// (`ArchivePause`): its duration leaves those times out, its files' offsets do not.
enum IndividualArchive {
    static let maxStreams = 50

    /// Records until `shouldStop`; the ZIP, or why it could not be written.
    static func record(id: String, sessionID: String, name: String, createdAt: Int64, directory: String, hub: VideoHub,
                       selection: @Sendable () -> StreamSelection, paused: @escaping @Sendable (Bool) -> Void,
                       shouldStop: @Sendable (ArchiveProgress) -> Bool) async -> ArchiveRecorder.Outcome {
        let work = directory + "/" + id
        try? FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        let start = Date()
        /// Each stream's file being written (or ended with its stream), and the files of streams left out or chosen again.
        var recorders: [String: StreamRecorder] = [:]
        var done: [StreamRecorder] = []
        var files: [String: Int] = [:]
        let clock = ContinuousClock()
        let origin = clock.now
        var pause = ArchivePause(origin: origin, report: paused)
        while !shouldStop(pause.progress(since: origin, at: clock.now)) {
            let live = hub.streams(sessionID: sessionID)
            // Paused while nobody publishes: no stream, so no file is written then.
            _ = pause.update(publishing: !live.isEmpty, now: clock.now)
            let chosen = selection()
            // Left out, or chosen with other media: the file ends here.
            for (streamID, recorder) in recorders where recorder.kinds != chosen.kinds(streamID) {
                await recorder.finish(bridge: hub.bridge)
                done.append(recorder)
                recorders[streamID] = nil
            }
            // As the Video API: up to `maxStreams` streams are recorded, any published after them are not.
            for stream in live where recorders[stream.id] == nil && (files[stream.id] != nil || files.count < maxStreams) {
                let kinds = chosen.kinds(stream.id)
                guard !kinds.isEmpty else { continue }
                let taps = (try? await hub.bridge.tapStream(sessionID: sessionID, streamID: stream.id, tap: ProducerTapID(VideoArchives.holder(id)),
                                                           kinds: kinds)) ?? []
                guard !taps.isEmpty else { continue }  // no media yet: tried again next time
                let data = hub.connections(sessionID: sessionID).first { $0.id == stream.connectionID }?.grant.connectionData ?? ""
                let n = files[stream.id, default: 0] + 1
                files[stream.id] = n
                recorders[stream.id] = StreamRecorder(streamID: stream.id, connectionData: data, directory: work,
                                                      name: stream.id + (n > 1 ? "-\(n)" : ""), kinds: kinds, taps: taps,
                                                      archiveStart: start)
            }
            let ids = Set(live.map(\.id))
            for recorder in recorders.values where !recorder.ended {
                if ids.contains(recorder.streamID) { await recorder.poll(bridge: hub.bridge) } else { await recorder.finish(bridge: hub.bridge) }
            }
            try? await Task.sleep(for: .milliseconds(100))
        }
        for recorder in recorders.values { await recorder.finish(bridge: hub.bridge) }
        let duration = Int((pause.recorded(since: origin, at: clock.now) / .milliseconds(1) / 1_000).rounded())
        let kept = (done + recorders.values).filter(\.hasFile).sorted { ($0.startOffset, $0.filename) < ($1.startOffset, $1.filename) }
        let zip = directory + "/" + id + ".zip"
        let failure = kept.compactMap(\.failure).first ?? writeZip(zip, id: id, sessionID: sessionID, name: name, createdAt: createdAt, files: kept)
        try? FileManager.default.removeItem(atPath: work)
        return ArchiveRecorder.Outcome(file: zip, size: ((try? FileManager.default.attributesOfItem(atPath: zip))?[.size] as? Int) ?? 0, duration: duration, failure: failure)
    }

    /// The manifest and every stream's file in one ZIP; the reason it could not be written, or nil.
    private static func writeZip(_ path: String, id: String, sessionID: String, name: String, createdAt: Int64,
                                 files: [StreamRecorder]) -> String? {
        let manifest: [String: Any] = [
            "id": id, "name": name, "sessionId": sessionID, "createdAt": createdAt,
            "files": files.map { f -> [String: Any] in
                ["streamId": f.streamID, "connectionData": f.connectionData, "filename": f.filename, "size": f.size,
                 "startTimeOffset": f.startOffset, "stopTimeOffset": f.stopOffset]
            },
        ]
        guard let json = try? JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys]) else { return "manifest" }
        guard FileManager.default.createFile(atPath: path, contents: nil), let out = FileHandle(forWritingAtPath: path) else {
            return "cannot create \(path)"
        }
        defer { try? out.close() }
        let now = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: Date())
        let modified = (year: now.year ?? 2000, month: now.month ?? 1, day: now.day ?? 1, hour: now.hour ?? 0, minute: now.minute ?? 0,
                        second: now.second ?? 0)
        var zip = ZipWriter()
        do {
            let manifestBytes = [UInt8](json)
            guard let header = zip.entry(name: id + ".json", size: manifestBytes.count, crc32: CRC32.checksum(manifestBytes), modified: modified) else {
                return "the archive is too large for a ZIP"
            }
            try out.write(contentsOf: header + manifestBytes)
            for file in files {
                guard let input = FileHandle(forReadingAtPath: file.path) else { return "cannot read \(file.filename)" }
                defer { try? input.close() }
                var crc: UInt32 = 0
                var size = 0
                while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty {
                    crc = chunk.withUnsafeBytes { CRC32.update(crc, $0) }
                    size += chunk.count
                }
                guard let header = zip.entry(name: file.filename, size: size, crc32: crc, modified: modified) else {
                    return "the archive is too large for a ZIP"
                }
                try out.write(contentsOf: header)
                try input.seek(toOffset: 0)
                while let chunk = try input.read(upToCount: 1 << 20), !chunk.isEmpty { try out.write(contentsOf: chunk) }
            }
            try out.write(contentsOf: zip.end())
        } catch {
            return "writing \(path): \(error)"
        }
        return nil
    }
}
