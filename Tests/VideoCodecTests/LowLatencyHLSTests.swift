import Foundation
import Testing
@testable import VideoCodec

@Suite("Low-latency HLS: partial segments, blocking reloads")
struct LowLatencyHLSTests {
    typealias Request = LowLatencyPlaylist.Request

    @Test("a blocking reload is answered once its segment is whole, or its part listed; too far ahead is refused")
    func blockingRequests() throws {
        let at = LowLatencyPlaylist.Position(segment: 5, parts: 2, ended: false)
        #expect(at.satisfies(Request(msn: 4)) && !at.satisfies(Request(msn: 5)))
        #expect(at.satisfies(Request(msn: 5, part: 1)) && !at.satisfies(Request(msn: 5, part: 2)) && !at.satisfies(Request(msn: 6, part: 0)))
        #expect(at.satisfies(Request(msn: 3, part: 9)), "a later segment holds an earlier one's parts")
        #expect(LowLatencyPlaylist.Position(segment: 5, parts: 0, ended: true).satisfies(Request(msn: 9, part: 3)), "an ended playlist never blocks")
        #expect(!at.tooFarAhead(Request(msn: 6)) && at.tooFarAhead(Request(msn: 7)), "the last whole segment (4) plus two")
        #expect(!at.tooFarAhead(Request(msn: 5, part: 4)) && at.tooFarAhead(Request(msn: 5, part: 5)), "three parts past the last listed (1)")
        #expect(!at.tooFarAhead(Request(msn: 6, part: 2)) && at.tooFarAhead(Request(msn: 6, part: 3)))

        #expect(try Request(query: [:]) == nil)
        #expect(try Request(query: ["_HLS_msn": "12"]) == Request(msn: 12))
        #expect(try Request(query: ["_HLS_msn": "12", "_HLS_part": "0"]) == Request(msn: 12, part: 0))
        #expect(throws: Request.Refusal.partWithoutSegment) { try Request(query: ["_HLS_part": "1"]) }
        for bad in ["", "-1", "1.5", "x", "9999999999"] {
            #expect(throws: Request.Refusal.notANumber) { try Request(query: ["_HLS_msn": bad]) }
        }
    }

    @Test("the playlist lists whole segments in a window, parts of the newest, a hint of the next part, and an end")
    func playlistText() {
        var playlist = LowLatencyPlaylist(targetDuration: 2, partTarget: 0.5, window: 4)
        playlist.begin(at: 1_700_000_000)
        for segment in 0..<6 {
            for part in 0..<4 { playlist.add(.init(duration: 0.5, independent: part == 0)) }
            let gone = playlist.endSegment()
            #expect(gone == (segment >= 4 ? [segment - 4] : []))
            playlist.begin(at: 1_700_000_002 + 2 * Double(segment))
        }
        playlist.add(.init(duration: 0.5, independent: true))
        let text = playlist.text
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.prefix(7) == ["#EXTM3U", "#EXT-X-VERSION:6", "#EXT-X-TARGETDURATION:2", "#EXT-X-PART-INF:PART-TARGET=0.500",
                                    "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.500", "#EXT-X-MEDIA-SEQUENCE:2",
                                    "#EXT-X-INDEPENDENT-SEGMENTS"], "\(text)")
        #expect(lines.contains("#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:24.000Z"), "the first listed segment's time: \(text)")
        #expect(lines.filter { $0.hasPrefix("segment-") } == ["segment-2.ts", "segment-3.ts", "segment-4.ts", "segment-5.ts"])
        let parts = lines.filter { $0.hasPrefix("#EXT-X-PART:") }
        #expect(parts.count == 9 && parts.first == "#EXT-X-PART:DURATION=0.500,URI=\"segment-4.0.ts\",INDEPENDENT=YES", "\(parts)")
        #expect(parts.last == "#EXT-X-PART:DURATION=0.500,URI=\"segment-6.0.ts\",INDEPENDENT=YES" && parts[1] == "#EXT-X-PART:DURATION=0.500,URI=\"segment-4.1.ts\"")
        #expect(lines.last == "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"segment-6.1.ts\"")
        #expect(playlist.position == .init(segment: 6, parts: 1, ended: false))

        playlist.end()
        let ended = playlist.text.split(separator: "\n").map(String.init)
        #expect(ended.last == "#EXT-X-ENDLIST" && !ended.contains { $0.hasPrefix("#EXT-X-PART:") || $0.hasPrefix("#EXT-X-PRELOAD") })
        #expect(ended.filter { $0.hasPrefix("segment-") }.last == "segment-6.ts" && playlist.position.ended)
    }

    @Test("the writer's parts are at most half a second, the first of each segment starts at its key frame, a segment is its parts end to end")
    func writerParts() async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("llhls-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let progress = HLSProgress()
        let writer = try MediaWriter([.lowLatencyHLS(directory: base, progress: progress)],
                                     video: .init(width: 160, height: 120, frameRate: 15, bitrate: 300, keyframeInterval: 30), audio: true)
        #expect(writer.statuses == [.connecting])
        // A reload waiting for the second segment's first part, answered while the pictures come.
        let waiting = Task { await progress.wait(for: .init(msn: 1, part: 0), timeout: .seconds(20)) }
        // 5 s: two whole segments and a half.
        for i in 0..<75 {
            writer.add(I420Image(width: 160, height: 120, y: UInt8(40 + i), u: 90, v: 240), index: Int64(i))
            writer.add(samples: [Int16](repeating: Int16(i), count: 3_200))
            if i == 10 { #expect(writer.statuses == [.live], "live once a part is listed") }
        }
        #expect(await waiting.value)
        #expect(progress.position == .init(segment: 2, parts: 2, ended: false), "parts of 7 pictures (0.467 s) and one of 2 to end each segment")
        #expect(await progress.wait(for: .init(msn: 3, part: 0), timeout: .milliseconds(100)) == false, "not yet there: the wait runs out")
        let live = try String(contentsOfFile: base + "/live.m3u8", encoding: .utf8)
        #expect(live.contains("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"segment-2.2.ts\""), "\(live)")
        for segment in 0..<2 {
            var joined: [UInt8] = []
            for part in 0..<5 { joined += [UInt8](try Data(contentsOf: URL(fileURLWithPath: base + "/" + LowLatencyPlaylist.partName(segment, part)))) }
            let whole = [UInt8](try Data(contentsOf: URL(fileURLWithPath: base + "/" + LowLatencyPlaylist.segmentName(segment))))
            #expect(joined == whole && whole.count % 188 == 0 && stride(from: 0, to: whole.count, by: 188).allSatisfy { whole[$0] == 0x47 })
            let pids = (0..<3).map { Int(whole[188 * $0 + 1] & 0x1f) << 8 | Int(whole[188 * $0 + 2]) }
            #expect(pids.contains(0), "each segment starts with the stream's tables (SDT, PAT, PMT), playable from there: \(pids)")
        }
        let durations = live.split(separator: "\n").filter { $0.hasPrefix("#EXT-X-PART:") }.map { line in
            Double(line.split(separator: ",")[0].dropFirst("#EXT-X-PART:DURATION=".count))!
        }
        #expect(durations.allSatisfy { $0 <= 0.5 } && durations.count == 12, "\(durations)")
        #expect(live.components(separatedBy: "INDEPENDENT=YES").count - 1 == 3, "each segment's first part")
        #expect(live.contains("#EXTINF:2.000,\nsegment-0.ts\n") && live.contains("#EXTINF:2.000,\nsegment-1.ts\n"), "\(live)")

        writer.close()
        #expect(writer.failure == nil && writer.statuses == [.ended])
        #expect(progress.position.ended)
        let ended = try String(contentsOfFile: base + "/live.m3u8", encoding: .utf8)
        #expect(ended.hasSuffix("#EXTINF:1.000,\nsegment-2.ts\n#EXT-X-ENDLIST\n"), "the last segment is what was made of it: \(ended)")
    }

    @Test("sound alone: segments of 2 s cut by the sound's own frames, every part independent")
    func soundAlone() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("llhls-a-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let progress = HLSProgress()
        let writer = try MediaWriter([.lowLatencyHLS(directory: base, progress: progress)], video: nil, audio: true)
        for _ in 0..<50 { writer.add(samples: [Int16](repeating: 1_000, count: 4_800)) }
        writer.close()
        #expect(writer.failure == nil && progress.position.ended)
        let playlist = try String(contentsOfFile: base + "/live.m3u8", encoding: .utf8)
        let durations = playlist.split(separator: "\n").filter { $0.hasPrefix("#EXTINF:") }.map { Double($0.dropFirst(8).dropLast())! }
        #expect(durations.count == 3 && durations.prefix(2).allSatisfy { abs($0 - 2) < 0.03 }, "\(playlist)")
        #expect(playlist.contains("#EXT-X-TARGETDURATION:2") && playlist.hasSuffix("#EXT-X-ENDLIST\n"))
        let part = [UInt8](try Data(contentsOf: URL(fileURLWithPath: base + "/" + LowLatencyPlaylist.partName(1, 2))))
        #expect(!part.isEmpty && part.count % 188 == 0)
    }
}
