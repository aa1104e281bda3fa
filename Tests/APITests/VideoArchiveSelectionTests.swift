import Foundation
import Media
import Testing
@testable import API

@Suite("What an archive records of each stream")
struct VideoArchiveSelectionTests {
    typealias Selection = StreamSelection
    typealias Chosen = ChosenStream

    @Test("auto records the archive's media of every stream; manual only what was chosen, within the archive's media")
    func kinds() {
        let both: Set<MediaKind> = [.audio, .video]
        #expect(Selection(kinds: both, chosen: nil).kinds("any") == both)
        #expect(Selection(kinds: [.audio], chosen: nil).kinds("any") == [.audio])
        let chosen = [Chosen(streamId: "a", hasAudio: true, hasVideo: false), Chosen(streamId: "b", hasAudio: false, hasVideo: true)]
        let manual = Selection(kinds: both, chosen: chosen)
        #expect(manual.kinds("a") == [.audio])
        #expect(manual.kinds("b") == [.video])
        #expect(manual.kinds("c").isEmpty)
        #expect(Selection(kinds: [.audio], chosen: chosen).kinds("b").isEmpty)
        #expect(Selection(kinds: both, chosen: []).kinds("a").isEmpty)
    }

    static func archive(streams: [Chosen]?, status: VideoArchives.Archive.Status = .started) -> VideoArchives.Archive {
        VideoArchives.Archive(id: "arc", sessionID: "1_s", projectID: "p", name: "", createdAt: 1, status: status, reason: "", recordingID: "",
                              duration: 0, size: 0, updatedAt: 1, outputMode: nil, hasAudio: true, hasVideo: true, file: nil, streams: streams)
    }

    @Test("the archive object names its stream mode and, while a manual one records, its streams")
    func json() {
        let chosen = [Chosen(streamId: "a", hasAudio: true, hasVideo: false)]
        let recording = Self.archive(streams: chosen).json(url: nil)
        #expect(recording["streamMode"] as? String == "manual")
        #expect((recording["streams"] as? [[String: Any]])?.first?["streamId"] as? String == "a")
        #expect((recording["streams"] as? [[String: Any]])?.first?["hasVideo"] as? Bool == false)
        #expect(Self.archive(streams: chosen).selection.heard == ["a"])
        #expect((Self.archive(streams: chosen, status: .available).json(url: nil)["streams"] as? [Any])?.isEmpty == true)
        let automatic = Self.archive(streams: nil).json(url: nil)
        #expect(automatic["streamMode"] as? String == "auto")
        #expect((automatic["streams"] as? [Any])?.isEmpty == true)
    }

    @Test("metadata saved before stream modes existed reads back as auto")
    func olderMetadata() throws {
        let saved = #"{"id":"arc","sessionID":"1_s","projectID":"p","name":"","createdAt":1,"status":"available","reason":"","recordingID":"r","duration":3,"size":9,"updatedAt":2}"#
        let archive = try JSONDecoder().decode(VideoArchives.Archive.self, from: Data(saved.utf8))
        #expect(!archive.manual && archive.selection.kinds("any") == [.audio])
        let again = try JSONDecoder().decode(VideoArchives.Archive.self, from: JSONEncoder().encode(Self.archive(streams: [])))
        #expect(again.manual && again.streams == [])
    }
}

@Suite("A composed archive's picture")
struct ArchiveCanvasTests {
    @Test("the Video API's six resolutions, each at a bitrate for its size, bounded by maxBitrate; others refused")
    func resolutions() throws {
        let sizes = try ArchiveCanvas.resolutions.map { r in try #require(ArchiveCanvas(resolution: r)) }
        #expect(sizes.map { [$0.width, $0.height, $0.bitrate] } == [[640, 480, 1_000], [480, 640, 1_000], [1280, 720, 2_500], [720, 1280, 2_500],
                                                                   [1920, 1080, 4_500], [1080, 1920, 4_500]])
        #expect(sizes.map(\.resolution) == ArchiveCanvas.resolutions)
        #expect(ArchiveCanvas(resolution: "1280x720", maxBitrate: 800_000)?.bitrate == 800)
        #expect(ArchiveCanvas(resolution: "640x480", maxBitrate: 6_000_000)?.bitrate == 1_000)
        #expect(ArchiveCanvas(resolution: "1024x768") == nil && ArchiveCanvas(resolution: "") == nil)
        #expect(ArchiveCanvas.standard.resolution == "640x480")
    }
}

@Suite("An archive's pauses")
struct ArchivePauseTests {
    final class Reports: @unchecked Sendable {
        var values: [Bool] = []
    }

    @Test("paused while nobody publishes, each change reported once, the paused time added up")
    func pauses() {
        let reports = Reports()
        let t0 = ContinuousClock.now
        var pause = ArchivePause(origin: t0) { reports.values.append($0) }
        // (at, publishing) → paused
        let steps: [(Int, Bool, Bool)] = [(0, true, false), (2, false, true), (3, false, true), (5, true, false), (8, false, true)]
        var paused: [Bool] = []
        for (at, publishing, _) in steps { paused.append(pause.update(publishing: publishing, now: t0 + .seconds(at))) }
        #expect(paused == steps.map(\.2))
        #expect(pause.total(at: t0 + .seconds(9)) == .seconds(4), "3 s, then 1 s so far")
        #expect(reports.values == [true, false, true])
        #expect(pause.progress(since: t0, at: t0 + .seconds(9)).published, "published once: still so while paused")
        // Nobody at its first look, a second after it began (its files and encoders set up): paused from the start,
        // so an archive nobody published in records nothing.
        var unpublished = ArchivePause(origin: t0) { _ in }
        _ = unpublished.update(publishing: false, now: t0 + .seconds(1))
        #expect(!unpublished.progress(since: t0, at: t0 + .seconds(61)).published)
        #expect(unpublished.recorded(since: t0, at: t0 + .seconds(61)) == .zero)
        var never = ArchivePause(origin: t0, report: nil)
        let neverPaused = never.update(publishing: false, now: t0)
        #expect(!neverPaused && never.total(at: t0 + .seconds(9)) == .zero, "a broadcast never pauses")
    }
}

@Suite("When an archive stops by itself")
struct ArchiveEndingTests {
    /// Runs a recorder whose recording goes through `steps` (`published`: anyone has, since it started) until told
    /// to stop: the step it stopped at (-1: none) and why.
    func run(_ steps: [(elapsed: Int, recorded: Int, published: Bool)], publishWithin: Duration?) async -> (Int, ArchiveRecorder.Ending?) {
        let (ends, end) = AsyncStream<(Int, ArchiveRecorder.Ending?)>.makeStream()
        let progress = steps.map { ArchiveProgress(recorded: .seconds($0.recorded), elapsed: .seconds($0.elapsed), published: $0.published) }
        let recorder = ArchiveRecorder(maxDuration: .seconds(100), publishWithin: publishWithin, ended: { outcome, ending in
            end.yield((outcome.duration, ending))
            end.finish()
        }) { shouldStop in
            ArchiveRecorder.Outcome(file: "", size: 0, duration: progress.firstIndex(where: shouldStop) ?? -1, failure: nil)
        }
        var result: (Int, ArchiveRecorder.Ending?) = (-2, nil)
        for await e in ends { result = e }
        withExtendedLifetime(recorder) {}
        return result
    }

    @Test("nobody publishing within the archive's minute stops it then; anyone publishing in time, never for that")
    func publishWithin() async {
        let unpublished = await run([(0, 0, false), (59, 0, false), (60, 0, false), (61, 0, false)], publishWithin: .seconds(60))
        #expect(unpublished.0 == 2 && unpublished.1 == .nothingPublished)
        #expect(unpublished.1?.reason == "no stream published within a minute")
        let inTime = await run([(0, 0, false), (30, 0, true), (60, 30, true), (90, 30, true), (150, 90, true), (170, 100, true)], publishWithin: .seconds(60))
        #expect(inTime.0 == 5 && inTime.1 == .maxDuration, "published at 30 s, paused from 60 s to 90 s, stopped at 100 s recorded")
        #expect(inTime.1?.reason == "maximum duration exceeded")
    }

    @Test("without a minute to publish in (a broadcast), only the maximum duration stops it; nothing stopping it, no ending")
    func broadcast() async {
        let unpublished = await run([(0, 0, false), (600, 0, false), (700, 100, false)], publishWithin: nil)
        #expect(unpublished.0 == 2 && unpublished.1 == .maxDuration)
        let failed = await run([(0, 0, true)], publishWithin: nil)
        #expect(failed.0 == -1 && failed.1 == nil)
    }
}
