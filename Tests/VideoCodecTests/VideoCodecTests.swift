import Foundation
import Testing
@testable import VideoCodec

@Suite("Video composition and VP8")
struct VideoCodecTests {
    @Test("best fit: one picture fills the canvas, more share a grid filled row by row, at most 16")
    func layouts() {
        #expect(CompositeLayout.bestFit(count: 0, width: 640, height: 480).isEmpty)
        #expect(CompositeLayout.bestFit(count: 1, width: 640, height: 480) == [.init(x: 0, y: 0, width: 640, height: 480)])
        #expect(CompositeLayout.bestFit(count: 2, width: 640, height: 480) == [.init(x: 0, y: 0, width: 320, height: 480),
                                                                                .init(x: 320, y: 0, width: 320, height: 480)])
        let three = CompositeLayout.bestFit(count: 3, width: 640, height: 480)
        #expect(three.map(\.x) == [0, 320, 0] && three.map(\.y) == [0, 0, 240] && three.allSatisfy { $0.width == 320 && $0.height == 240 })
        #expect(CompositeLayout.bestFit(count: 9, width: 640, height: 480).count == 9)
        #expect(CompositeLayout.bestFit(count: 40, width: 640, height: 480).count == 16)
        // A portrait canvas turns the grid: two one above the other, five in two columns of three rows.
        #expect(CompositeLayout.bestFit(count: 2, width: 480, height: 640) == [.init(x: 0, y: 0, width: 480, height: 320),
                                                                                .init(x: 0, y: 320, width: 480, height: 320)])
        let five = CompositeLayout.bestFit(count: 5, width: 720, height: 1280)
        #expect(five.map(\.x) == [0, 360, 0, 360, 0] && five.map(\.y) == [0, 0, 426, 426, 852] && five.allSatisfy { $0.width == 360 && $0.height == 426 })
        for n in 1...16 {
            let rects = CompositeLayout.bestFit(count: n, width: 640, height: 480)
            #expect(rects.allSatisfy { $0.x >= 0 && $0.y >= 0 && $0.x + $0.width <= 640 && $0.y + $0.height <= 480 && $0.x % 2 == 0 && $0.y % 2 == 0 })
        }
    }

    @Test("pip puts the second picture small in the corner; the presentations give the first four fifths")
    func presentations() {
        let pip = CompositeLayout.rects(.pip, count: 3, width: 640, height: 480)
        #expect(pip == [.init(x: 0, y: 0, width: 640, height: 480), .init(x: 472, y: 352, width: 160, height: 120)])
        let vertical = CompositeLayout.rects(.verticalPresentation, count: 3, width: 640, height: 480)
        #expect(vertical == [.init(x: 0, y: 0, width: 512, height: 480), .init(x: 512, y: 0, width: 128, height: 240),
                             .init(x: 512, y: 240, width: 128, height: 240)])
        let horizontal = CompositeLayout.rects(.horizontalPresentation, count: 3, width: 640, height: 480)
        #expect(horizontal == [.init(x: 0, y: 0, width: 640, height: 384), .init(x: 0, y: 384, width: 320, height: 96),
                               .init(x: 320, y: 384, width: 320, height: 96)])
        for kind in CompositeLayout.Kind.allCases {
            #expect(CompositeLayout.rects(kind, count: 1, width: 640, height: 480) == [.init(x: 0, y: 0, width: 640, height: 480)])
            #expect(CompositeLayout.rects(kind, count: 0, width: 640, height: 480).isEmpty)
        }
    }

    @Test("a picture is drawn scaled to fit its cell, centred, keeping its aspect ratio; the rest is left alone")
    func drawFits() {
        var canvas = I420Image(width: 64, height: 48)
        let picture = I420Image(width: 8, height: 6, y: 200, u: 90, v: 240)
        canvas.draw(picture, fitting: .init(x: 32, y: 0, width: 32, height: 48))
        // 4:3 into 32 × 48: 32 × 24, centred vertically (rows 12..<36).
        #expect(canvas.y[11 * 64 + 40] == 16 && canvas.y[12 * 64 + 40] == 200 && canvas.y[35 * 64 + 63] == 200 && canvas.y[36 * 64 + 40] == 16)
        #expect(canvas.y[20 * 64 + 31] == 16, "left of the cell untouched")
        #expect(canvas.u[(12 / 2) * 32 + 20] == 90 && canvas.v[(12 / 2) * 32 + 20] == 240)
        #expect(canvas.u[0] == 128)
    }

    @Test("a picture encoded by VP8 decodes back to the same size and colour")
    func roundTrip() throws {
        let encoder = try VP8Encoder(width: 160, height: 120, frameRate: 15, bitrate: 300, keyframeInterval: 30)
        let decoder = try VP8Decoder()
        var decoded: I420Image?
        for pts in 0..<5 {
            for frame in encoder.encode(I420Image(width: 160, height: 120, y: 81, u: 90, v: 240), pts: Int64(pts)) {
                #expect(frame.keyframe == (pts == 0))
                decoded = decoder.decode(frame.bytes) ?? decoded
            }
        }
        let picture = try #require(decoded)
        #expect(picture.width == 160 && picture.height == 120)
        #expect(abs(Int(picture.y[60 * 160 + 80]) - 81) <= 3 && abs(Int(picture.u[30 * 80 + 40]) - 90) <= 3 && abs(Int(picture.v[30 * 80 + 40]) - 240) <= 3)
        #expect(decoder.decode([0x01, 0x02, 0x03]) == nil, "garbage is refused, not a crash")
    }
}

@Suite("H.264 decoding")
struct H264DecoderTests {
    @Test("an access unit from libx264 (Annex B, parameter sets in band) decodes to the same size and colour")
    func roundTrip() throws {
        let encoder = H264TestEncoder(width: 160, height: 120)
        let decoder = try H264Decoder()
        var pictures: [I420Image] = []
        for i in 0..<3 {
            for unit in encoder.encode(I420Image(width: 160, height: 120, y: 81, u: 90, v: 240), pts: Int64(i)) {
                #expect(unit.starts(with: [0, 0, 0, 1]) || unit.starts(with: [0, 0, 1]))
                if let picture = decoder.decode(unit) { pictures.append(picture) }
            }
        }
        let picture = try #require(pictures.first)
        #expect(picture.width == 160 && picture.height == 120)
        #expect(abs(Int(picture.y[60 * 160 + 80]) - 81) <= 3 && abs(Int(picture.u[30 * 80 + 40]) - 90) <= 3 && abs(Int(picture.v[30 * 80 + 40]) - 240) <= 3)
        #expect(try H264Decoder().decode([0, 0, 0, 1, 0x65, 0x88, 0x84, 0x00]) == nil, "a slice without its parameter sets is refused, not a crash")
        #expect(decoder.decode([]) == nil && decoder.decode([0xFF, 0x00, 0x13]) == nil)
    }
}

@Suite("MP4 files, HLS playlists and RTMP streams of pictures and sound")
struct MediaWriterTests {
    /// The four-character types of a file's top-level boxes, in order, and whether `fourcc` occurs anywhere.
    static func boxes(_ bytes: [UInt8]) -> [String] {
        var types: [String] = []
        var at = 0
        while at + 8 <= bytes.count {
            let size = bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) }
            types.append(String(decoding: bytes[at + 4..<at + 8], as: UTF8.self))
            guard size >= 8 else { break }
            at += size
        }
        return types
    }

    static func contains(_ bytes: [UInt8], _ fourcc: String) -> Bool {
        let needle = Array(fourcc.utf8)
        return bytes.indices.dropLast(3).contains { Array(bytes[$0..<$0 + 4]) == needle }
    }

    @Test("H.264 pictures and AAC sound make a fragmented MP4: the index first, then a fragment per key frame")
    func videoAndSound() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("mp4-\(UInt32.random(in: 0...UInt32.max)).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try MediaWriter([.mp4(path: path)], video: .init(width: 160, height: 120, frameRate: 15, bitrate: 300, keyframeInterval: 15), audio: true)
        let tone = (0..<48_000).map { Int16(8_000 * sin(2 * Double.pi * 440 * Double($0) / 48_000)) }
        for i in 0..<45 {
            writer.add(I420Image(width: 160, height: 120, y: UInt8(40 + i), u: 90, v: 240), index: Int64(i))
            writer.add(samples: Array(tone[(i * 1_066) % 40_000..<(i * 1_066) % 40_000 + 1_066]))
        }
        writer.close()
        #expect(writer.failure == nil)
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let top = Self.boxes(bytes)
        #expect(Array(top.prefix(2)) == ["ftyp", "moov"])
        #expect(top.filter { $0 == "moof" }.count >= 3 && top.filter { $0 == "mdat" }.count == top.filter { $0 == "moof" }.count, "\(top)")
        #expect(Self.contains(bytes, "avc1") && Self.contains(bytes, "mp4a"))
    }

    @Test("sound alone has no video track; a file that cannot be created is a clear error")
    func soundAloneAndRefusal() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("m4a-\(UInt32.random(in: 0...UInt32.max)).mp4").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try MediaWriter([.mp4(path: path)], video: nil, audio: true)
        writer.add(samples: [Int16](repeating: 1_000, count: 30_000))
        writer.close()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(writer.failure == nil && Self.contains(bytes, "mp4a") && !Self.contains(bytes, "avc1"))
        #expect(throws: MediaWriter.Failure.self) { try MediaWriter([.mp4(path: "/nonexistent/dir/x.mp4")], video: nil, audio: true) }
    }

    @Test("one encoding goes to an MP4 file and an HLS playlist at once: MPEG-TS segments of 2 s, a sliding window without dvr")
    func hlsBesideMP4() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hls-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let writer = try MediaWriter([.hls(directory: base, dvr: false), .mp4(path: base + "/a.mp4")],
                                     video: .init(width: 160, height: 120, frameRate: 15, bitrate: 300, keyframeInterval: 30), audio: true)
        #expect(writer.statuses == [.connecting, .live], "HLS is live once a segment is listed")
        // 20 s: ten segments, of which the playlist keeps the last six and the directory no more than a few besides.
        for i in 0..<300 {
            writer.add(I420Image(width: 160, height: 120, y: UInt8(i % 200), u: 90, v: 240), index: Int64(i))
            writer.add(samples: [Int16](repeating: Int16(i), count: 3_200))
        }
        #expect(writer.statuses == [.live, .live])
        writer.close()
        #expect(writer.failure == nil && writer.statuses == [.ended, .ended])
        let playlist = try String(contentsOfFile: base + "/live.m3u8", encoding: .utf8)
        let listed = playlist.split(separator: "\n").filter { $0.hasPrefix("segment-") }
        #expect(playlist.hasPrefix("#EXTM3U") && playlist.contains("#EXT-X-TARGETDURATION:2") && listed.count == 6, "\(playlist)")
        #expect(listed.last == "segment-9.ts" && playlist.contains("#EXT-X-ENDLIST"), "\(playlist)")
        let segments = try FileManager.default.contentsOfDirectory(atPath: base).filter { $0.hasSuffix(".ts") }
        #expect(segments.count <= 8 && !segments.contains("segment-0.ts"), "old segments deleted: \(segments)")
        let segment = [UInt8](try Data(contentsOf: URL(fileURLWithPath: base + "/segment-9.ts")))
        #expect(segment.count % 188 == 0 && stride(from: 0, to: segment.count, by: 188).allSatisfy { segment[$0] == 0x47 }, "MPEG-TS packets")
        #expect(Self.boxes([UInt8](try Data(contentsOf: URL(fileURLWithPath: base + "/a.mp4")))).prefix(2) == ["ftyp", "moov"])
    }

    @Test("a constant quantizer instead of a bitrate: a lower one keeps more of a busy picture, in a larger file")
    func quantizer() throws {
        func size(_ qp: Int) throws -> Int {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("qp-\(qp)-\(UInt32.random(in: 0...UInt32.max)).mp4").path
            defer { try? FileManager.default.removeItem(atPath: path) }
            let writer = try MediaWriter([.mp4(path: path)], video: .init(width: 160, height: 120, frameRate: 15, bitrate: 300, keyframeInterval: 15, quantizer: qp),
                                         audio: false)
            var noise = SystemRandomNumberGenerator()
            for i in 0..<30 {
                var image = I420Image(width: 160, height: 120)
                for p in image.y.indices { image.y[p] = UInt8.random(in: 16...235, using: &noise) }
                writer.add(image, index: Int64(i))
            }
            writer.close()
            #expect(writer.failure == nil)
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let constant = Self.contains(bytes, "=cqp")
            #expect(constant, "x264's settings say a constant quantizer (rc=cqp)")
            return bytes.count
        }
        let fine = try size(15), coarse = try size(40)
        #expect(fine > 2 * coarse, "\(fine) bytes at 15, \(coarse) at 40")
    }

    @Test("with dvr the playlist keeps two hours of segments")
    func hlsDVR() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("dvr-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: base) }
        let writer = try MediaWriter([.hls(directory: base, dvr: true)], video: .init(width: 160, height: 120, frameRate: 15, bitrate: 300, keyframeInterval: 30), audio: false)
        for i in 0..<300 { writer.add(I420Image(width: 160, height: 120, y: 80, u: 90, v: 240), index: Int64(i)) }
        writer.close()
        let playlist = try String(contentsOfFile: base + "/live.m3u8", encoding: .utf8)
        #expect(playlist.contains("segment-0.ts") && playlist.contains("segment-9.ts") && playlist.contains("#EXT-X-ENDLIST"), "\(playlist)")
        #expect(MediaWriter.Output.dvrSegments * 2 == 7_200)
    }

    @Test("an RTMP server that cannot be reached leaves the output offline, never the encoding stalled, and closing returns")
    func rtmpUnreachable() throws {
        // A port nothing listens on: refused at once, tried again every 2 s while the writer runs.
        let writer = try MediaWriter([.rtmp(url: "rtmp://127.0.0.1:9/live/none")], video: .init(width: 160, height: 120, frameRate: 15, bitrate: 300, keyframeInterval: 30), audio: true)
        let start = ContinuousClock.now
        while writer.statuses != [.offline], ContinuousClock.now - start < .seconds(5) {
            writer.add(I420Image(width: 160, height: 120, y: 80, u: 90, v: 240), index: 0)
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(writer.statuses == [.offline])
        // Far more than the queue holds: dropped, not kept.
        for i in 1..<600 { writer.add(I420Image(width: 160, height: 120, y: UInt8(i % 200), u: 90, v: 240), index: Int64(i)) }
        writer.close()
        #expect(writer.failure == nil && writer.statuses == [.ended])
    }
}

@Suite("Pictures drawn to cover a box")
struct CoverTests {
    @Test("a 4:3 picture covering a square box fills it, cropped at the sides, and nothing outside it")
    func cover() {
        var canvas = I420Image(width: 64, height: 64)
        var source = I420Image(width: 40, height: 30, y: 200)
        for row in 0..<30 { for col in 0..<4 { source.y[row * 40 + col] = 50 } }  // a dark band on the left edge: cropped away
        canvas.draw(source, covering: .init(x: 16, y: 16, width: 32, height: 32))
        let inside = (16..<48).flatMap { r in (16..<48).map { canvas.y[r * 64 + $0] } }
        #expect(inside.allSatisfy { $0 == 200 }, "filled, the band cropped")
        let outside = (0..<64).flatMap { r in (0..<64).filter { !(16..<48).contains(r) || !(16..<48).contains($0) }.map { canvas.y[r * 64 + $0] } }
        #expect(outside.allSatisfy { $0 == 16 }, "nothing drawn beyond the box")
    }
}
