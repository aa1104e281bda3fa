import Testing
@testable import Wire

/// A minimal EBML reader for checking what `WebMWriter` wrote.
struct EBMLElementView {
    var id: UInt32
    var start: Int
    var dataStart: Int
    /// Nil for "unknown size".
    var size: Int?

    /// The element at `offset`, or nil when its header runs past the end.
    init?(_ bytes: [UInt8], at offset: Int) {
        guard offset < bytes.count, bytes[offset] != 0 else { return nil }
        let idLength = bytes[offset].leadingZeroBitCount + 1
        guard idLength <= 4, offset + idLength < bytes.count else { return nil }
        id = bytes[offset..<(offset + idLength)].reduce(0) { $0 << 8 | UInt32($1) }
        let s = offset + idLength
        guard bytes[s] != 0 else { return nil }
        let sizeLength = bytes[s].leadingZeroBitCount + 1
        guard s + sizeLength <= bytes.count else { return nil }
        var value = UInt64(bytes[s] & (0xFF >> sizeLength))
        for b in bytes[(s + 1)..<(s + sizeLength)] { value = value << 8 | UInt64(b) }
        start = offset
        dataStart = s + sizeLength
        size = value == (1 << (7 * UInt64(sizeLength))) - 1 ? nil : Int(value)
    }

    var end: Int? { size.map { dataStart + $0 } }

    /// The elements in `range`, one after another.
    static func list(_ bytes: [UInt8], _ range: Range<Int>) -> [EBMLElementView] {
        var out: [EBMLElementView] = []
        var o = range.lowerBound
        while o < range.upperBound, let e = EBMLElementView(bytes, at: o), let end = e.end, end <= range.upperBound {
            out.append(e)
            o = end
        }
        return out
    }

    func children(_ bytes: [UInt8]) -> [EBMLElementView] { Self.list(bytes, dataStart..<(end ?? bytes.count)) }

    func data(_ bytes: [UInt8]) -> [UInt8] { Array(bytes[dataStart..<(end ?? bytes.count)]) }

    func unsigned(_ bytes: [UInt8]) -> UInt64 { data(bytes).reduce(0) { $0 << 8 | UInt64($1) } }

    func float(_ bytes: [UInt8]) -> Double { Double(bitPattern: unsigned(bytes)) }
}

@Suite("WebM writer")
struct WebMWriterTests {
    typealias View = EBMLElementView

    static func apply(_ patches: [(offset: Int, bytes: [UInt8])], to file: inout [UInt8]) {
        for patch in patches { file.replaceSubrange(patch.offset..<(patch.offset + patch.bytes.count), with: patch.bytes) }
    }

    /// A block's track, relative time and flags.
    struct Block: Equatable {
        var track: Int
        var time: Int16
        var flags: UInt8
        var size: Int
    }

    /// Each cluster's time and its blocks.
    static func clusters(_ file: [UInt8]) throws -> [(time: UInt64, blocks: [Block])] {
        let top = View.list(file, 0..<file.count)
        let segment = try #require(top.last)
        #expect(segment.id == 0x1853_8067)
        return segment.children(file).filter { $0.id == 0x1F43_B675 }.map { cluster in
            let children = cluster.children(file)
            let time = children.first { $0.id == 0xE7 }?.unsigned(file) ?? .max
            let blocks = children.filter { $0.id == 0xA3 }.map { block in
                let d = block.data(file)
                return Block(track: Int(d[0] & 0x7F), time: Int16(bitPattern: UInt16(d[1]) << 8 | UInt16(d[2])), flags: d[3], size: d.count - 4)
            }
            return (time, blocks)
        }
    }

    @Test("the header is an EBML header for DocType webm, then a Segment of unknown size with Info and Tracks")
    func header() throws {
        var writer = WebMWriter(video: (640, 480), audio: (48_000, 2), muxingApp: "switchboard")
        let header = writer.header()
        #expect(Array(header.prefix(4)) == [0x1A, 0x45, 0xDF, 0xA3])
        let ebml = try #require(View(header, at: 0))
        let fields = ebml.children(header)
        #expect(fields.first { $0.id == 0x4282 }?.data(header) == Array("webm".utf8))
        #expect(fields.first { $0.id == 0x4287 }?.unsigned(header) == 4)
        #expect(fields.first { $0.id == 0x4285 }?.unsigned(header) == 2)
        let ebmlEnd = try #require(ebml.end)
        let segment = try #require(View(header, at: ebmlEnd))
        #expect(segment.id == 0x1853_8067 && segment.size == nil)
        #expect(Array(header[(segment.dataStart - 8)..<segment.dataStart]) == [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])

        let sections = View.list(header, segment.dataStart..<header.count)
        #expect(sections.map(\.id) == [0x1549_A966, 0x1654_AE6B])
        let info = sections[0].children(header)
        #expect(info.first { $0.id == 0x2A_D7B1 }?.unsigned(header) == 1_000_000)
        #expect(info.first { $0.id == 0x4D80 }?.data(header) == Array("switchboard".utf8))
        #expect(info.first { $0.id == 0x4489 }?.size == 8)

        let entries = sections[1].children(header)
        #expect(entries.map(\.id) == [0xAE, 0xAE])
        let video = entries[0].children(header), audio = entries[1].children(header)
        #expect(video.first { $0.id == 0xD7 }?.unsigned(header) == 1)
        #expect(video.first { $0.id == 0x86 }?.data(header) == Array("V_VP8".utf8))
        let picture = try #require(video.first { $0.id == 0xE0 }).children(header)
        #expect(picture.first { $0.id == 0xB0 }?.unsigned(header) == 640)
        #expect(picture.first { $0.id == 0xBA }?.unsigned(header) == 480)
        #expect(audio.first { $0.id == 0xD7 }?.unsigned(header) == 2)
        #expect(audio.first { $0.id == 0x86 }?.data(header) == Array("A_OPUS".utf8))
        #expect(audio.first { $0.id == 0x63A2 }?.data(header) == WebMWriter.opusHead(channels: 2, inputSampleRate: 48_000))
        #expect(audio.first { $0.id == 0x56AA }?.unsigned(header) == 0)
        #expect(audio.first { $0.id == 0x56BB }?.unsigned(header) == 80_000_000)
        let sound = try #require(audio.first { $0.id == 0xE1 }).children(header)
        #expect(sound.first { $0.id == 0xB5 }?.float(header) == 48_000)
        #expect(sound.first { $0.id == 0x9F }?.unsigned(header) == 2)
    }

    @Test("an H.264 track makes the file Matroska: CodecID V_MPEG4/ISO/AVC with the avcC as CodecPrivate")
    func h264Header() throws {
        let avcC: [UInt8] = [1, 0x42, 0xC0, 0x1F, 0xFF, 0xE1, 0, 4, 0x67, 0x42, 0xC0, 0x1F, 1, 0, 2, 0x68, 0xCE]
        var writer = WebMWriter(video: (320, 240), audio: nil, muxingApp: "switchboard", videoCodec: .h264(avcC: avcC))
        let header = writer.header()
        let ebml = try #require(View(header, at: 0))
        #expect(ebml.children(header).first { $0.id == 0x4282 }?.data(header) == Array("matroska".utf8))
        let ebmlEnd = try #require(ebml.end)
        let segment = try #require(View(header, at: ebmlEnd))
        let tracks = View.list(header, segment.dataStart..<header.count)[1]
        let video = tracks.children(header)[0].children(header)
        #expect(video.first { $0.id == 0x86 }?.data(header) == Array("V_MPEG4/ISO/AVC".utf8))
        #expect(video.first { $0.id == 0x63A2 }?.data(header) == avcC)
    }

    @Test("OpusHead follows RFC 7845 §5.1")
    func opusHead() {
        #expect(WebMWriter.opusHead(channels: 1, inputSampleRate: 16_000)
                == Array("OpusHead".utf8) + [1, 1, 0, 0, 0x80, 0x3E, 0, 0, 0, 0, 0])
    }

    @Test("finish patches the Segment size to the file length less the data offset, and the Duration")
    func finishPatches() throws {
        var writer = WebMWriter(video: (320, 240), audio: nil, muxingApp: "test")
        var file = writer.header()
        for i in 0..<10 {
            file += writer.frame([UInt8](repeating: UInt8(i), count: 100 + i), track: .video, time: Int64(i) * 40, keyframe: i % 5 == 0)
        }
        #expect(writer.written == file.count)
        let patches = writer.finish()
        #expect(patches.allSatisfy { $0.offset + $0.bytes.count <= file.count })
        Self.apply(patches, to: &file)

        let top = View.list(file, 0..<file.count)
        #expect(top.map(\.id) == [0x1A45_DFA3, 0x1853_8067])
        let segment = top[1]
        #expect(segment.size == file.count - segment.dataStart)
        let info = try #require(segment.children(file).first { $0.id == 0x1549_A966 })
        #expect(info.children(file).first { $0.id == 0x4489 }?.float(file) == 400, "last frame at 360 ms, 40 ms long")
        // Every cluster's size was patched too: the segment's children cover it exactly.
        let children = segment.children(file)
        #expect(children.last?.end == file.count)
        #expect(try Self.clusters(file).map(\.blocks.count) == [5, 5])
    }

    @Test("blocks carry times relative to their cluster; a cluster starts at each video key frame")
    func clustersAndTimes() throws {
        var writer = WebMWriter(video: (320, 240), audio: (48_000, 2), muxingApp: "test")
        var file = writer.header()
        let frame: [UInt8] = [1, 2, 3]
        file += writer.frame(frame, track: .video, time: 0, keyframe: true)
        file += writer.frame(frame, track: .audio, time: 0, keyframe: false)
        file += writer.frame(frame, track: .audio, time: 20, keyframe: false)
        file += writer.frame(frame, track: .video, time: 33, keyframe: false)
        file += writer.frame(frame, track: .audio, time: 40, keyframe: false)
        file += writer.frame(frame, track: .video, time: 1_000, keyframe: true)
        file += writer.frame(frame, track: .audio, time: 1_010, keyframe: false)
        file += writer.frame(frame, track: .video, time: 1_033, keyframe: false)
        Self.apply(writer.finish(), to: &file)
        let clusters = try Self.clusters(file)
        #expect(clusters.map(\.time) == [0, 1_000])
        #expect(clusters[0].blocks == [
            Block(track: 1, time: 0, flags: 0x80, size: 3), Block(track: 2, time: 0, flags: 0x80, size: 3),
            Block(track: 2, time: 20, flags: 0x80, size: 3), Block(track: 1, time: 33, flags: 0, size: 3),
            Block(track: 2, time: 40, flags: 0x80, size: 3),
        ])
        #expect(clusters[1].blocks == [
            Block(track: 1, time: 0, flags: 0x80, size: 3), Block(track: 2, time: 10, flags: 0x80, size: 3),
            Block(track: 1, time: 33, flags: 0, size: 3),
        ])
    }

    @Test("a cluster also starts when a block's time would leave the int16 range")
    func int16Range() throws {
        var writer = WebMWriter(video: (320, 240), audio: nil, muxingApp: "test")
        var file = writer.header()
        file += writer.frame([0], track: .video, time: 0, keyframe: true)
        file += writer.frame([0], track: .video, time: 32_767, keyframe: false)
        file += writer.frame([0], track: .video, time: 32_768, keyframe: false)
        Self.apply(writer.finish(), to: &file)
        let clusters = try Self.clusters(file)
        #expect(clusters.map(\.time) == [0, 32_768])
        #expect(clusters.map { $0.blocks.map(\.time) } == [[0, 32_767], [0]])
        #expect(clusters[1].blocks[0].flags == 0, "still a delta frame")
    }

    @Test("audio alone is track 1, in clusters of 5 s, every block a key frame")
    func audioOnly() throws {
        var writer = WebMWriter(video: nil, audio: (48_000, 1), muxingApp: "test")
        var file = writer.header()
        for i in 0..<600 { file += writer.frame([0xFC], track: .audio, time: Int64(i) * 20, keyframe: false) }
        Self.apply(writer.finish(), to: &file)
        let clusters = try Self.clusters(file)
        #expect(clusters.map(\.time) == [0, 5_000, 10_000])
        #expect(clusters.allSatisfy { $0.blocks.count == 250 || $0.blocks.count == 100 })
        #expect(clusters.allSatisfy { $0.blocks.allSatisfy { $0.track == 1 && $0.flags == 0x80 } })
    }

    @Test("a time going backwards on a track is taken as that track's last time")
    func backwardsClamped() throws {
        var writer = WebMWriter(video: (320, 240), audio: (48_000, 2), muxingApp: "test")
        var file = writer.header()
        file += writer.frame([0], track: .video, time: 100, keyframe: true)
        file += writer.frame([0], track: .audio, time: 120, keyframe: true)
        file += writer.frame([0], track: .video, time: 50, keyframe: false)
        file += writer.frame([0], track: .audio, time: 110, keyframe: true)
        Self.apply(writer.finish(), to: &file)
        let clusters = try Self.clusters(file)
        #expect(clusters.map(\.time) == [100])
        #expect(clusters[0].blocks.map(\.time) == [0, 20, 0, 20])
    }

    @Test("EBML sizes take the shortest VINT; all-ones values are left for unknown size")
    func vints() {
        #expect(EBML.size(0) == [0x80])
        #expect(EBML.size(126) == [0xFE])
        #expect(EBML.size(127) == [0x40, 0x7F])
        #expect(EBML.size(16_382) == [0x7F, 0xFE])
        #expect(EBML.size(16_383) == [0x20, 0x3F, 0xFF])
        #expect(EBML.size(5, length: 8) == [0x01, 0, 0, 0, 0, 0, 0, 5])
        #expect(EBML.id(0x1A45_DFA3) == [0x1A, 0x45, 0xDF, 0xA3])
        #expect(EBML.id(0xA3) == [0xA3])
        #expect(EBML.unsigned(0xD7, 0) == [0xD7, 0x81, 0x00])
        #expect(EBML.unsigned(0x2A_D7B1, 1_000_000) == [0x2A, 0xD7, 0xB1, 0x83, 0x0F, 0x42, 0x40])
    }
}
