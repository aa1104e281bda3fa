import Testing
@testable import Wire

@Suite("VP8 frame assembly")
struct VP8FrameAssemblerTests {
    /// A key frame with a real-looking header (RFC 6386 §9.1): the scale bits are set so the
    /// parser has to mask them off.
    static func keyframe(_ size: Int, width: Int, height: Int) -> [UInt8] {
        var frame = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) }
        frame[0] = 0x10
        frame[3] = 0x9D
        frame[4] = 0x01
        frame[5] = 0x2A
        frame[6] = UInt8(width & 0xFF)
        frame[7] = UInt8(width >> 8) | 0x40
        frame[8] = UInt8(height & 0xFF)
        frame[9] = UInt8(height >> 8) | 0x80
        return frame
    }

    static func delta(_ size: Int) -> [UInt8] {
        (0..<size).map { i in i == 0 ? 0x11 : UInt8(truncatingIfNeeded: i &* 17) }
    }

    struct Packet {
        var timestamp: UInt32
        var marker: Bool
        var gapBefore = false
        var payload: [UInt8]
    }

    static func packets(_ frame: some Collection<UInt8>, timestamp: UInt32, maxPayload: Int = 500) -> [Packet] {
        let payloads = VP8Packetizer.packetize(frame, maxPayload: maxPayload)
        return payloads.enumerated().map { i, payload in
            Packet(timestamp: timestamp, marker: i == payloads.count - 1, payload: payload)
        }
    }

    static func push(_ assembler: inout VP8FrameAssembler, _ packets: [Packet]) -> [VP8FrameAssembler.Frame] {
        packets.compactMap { p in
            p.payload.withUnsafeBytes { assembler.push(timestamp: p.timestamp, marker: p.marker, gapBefore: p.gapBefore, payload: $0) }
        }
    }

    @Test("key and delta frames come back whole, the key frame with its picture size")
    func roundTrip() {
        let key = Self.keyframe(3_000, width: 640, height: 360)
        let d1 = Self.delta(1_200), d2 = Self.delta(90)
        var assembler = VP8FrameAssembler()
        #expect(assembler.needsKeyframe)
        let frames = Self.push(&assembler, Self.packets(key, timestamp: 1_000) + Self.packets(d1, timestamp: 4_000)
                                   + Self.packets(d2, timestamp: 7_000))
        #expect(frames == [
            VP8FrameAssembler.Frame(bytes: key, timestamp: 1_000, keyframe: true, width: 640, height: 360),
            VP8FrameAssembler.Frame(bytes: d1, timestamp: 4_000, keyframe: false),
            VP8FrameAssembler.Frame(bytes: d2, timestamp: 7_000, keyframe: false),
        ])
        #expect(!assembler.needsKeyframe && !assembler.waitingForKeyframe)
        #expect(assembler.framesDropped == 0)
    }

    @Test("a recording begins at a key frame: delta frames before it are dropped")
    func startsAtKeyframe() {
        var assembler = VP8FrameAssembler()
        let frames = Self.push(&assembler, Self.packets(Self.delta(800), timestamp: 0) + Self.packets(Self.delta(800), timestamp: 3_000)
                                   + Self.packets(Self.keyframe(900, width: 320, height: 240), timestamp: 6_000))
        #expect(frames.map(\.timestamp) == [6_000])
        #expect(assembler.framesDropped == 2)
        #expect(!assembler.needsKeyframe)
    }

    @Test("a missing middle packet drops the frame and every frame until the next key frame")
    func lossWaitsForKeyframe() {
        var assembler = VP8FrameAssembler()
        _ = Self.push(&assembler, Self.packets(Self.keyframe(1_000, width: 320, height: 240), timestamp: 0))
        var damaged = Self.packets(Self.delta(1_400), timestamp: 3_000)
        #expect(damaged.count == 3)
        damaged.remove(at: 1)
        damaged[1].gapBefore = true
        let after = Self.packets(Self.delta(600), timestamp: 6_000)
        let key = Self.keyframe(1_000, width: 320, height: 240)
        #expect(Self.push(&assembler, damaged).isEmpty)
        #expect(assembler.needsKeyframe)
        #expect(Self.push(&assembler, after).isEmpty)
        #expect(assembler.framesDropped == 2)
        let frames = Self.push(&assembler, Self.packets(key, timestamp: 9_000) + Self.packets(Self.delta(50), timestamp: 12_000))
        #expect(frames.map(\.timestamp) == [9_000, 12_000])
        #expect(frames.first?.bytes == key)
        #expect(!assembler.needsKeyframe)
    }

    @Test("a frame whose marker never comes is dropped when the next timestamp arrives")
    func missingMarker() {
        var assembler = VP8FrameAssembler()
        _ = Self.push(&assembler, Self.packets(Self.keyframe(100, width: 16, height: 16), timestamp: 0))
        var cut = Self.packets(Self.delta(1_400), timestamp: 3_000)
        cut.removeLast()
        let next = Self.packets(Self.keyframe(700, width: 16, height: 16), timestamp: 6_000)
        let frames = Self.push(&assembler, cut + next)
        #expect(frames.map(\.timestamp) == [6_000])
        #expect(assembler.framesDropped == 1)
    }

    @Test("a gap between frames waits for a key frame: a whole frame may be missing")
    func gapBetweenFrames() {
        var assembler = VP8FrameAssembler()
        _ = Self.push(&assembler, Self.packets(Self.keyframe(100, width: 16, height: 16), timestamp: 0))
        var next = Self.packets(Self.delta(100), timestamp: 6_000)
        next[0].gapBefore = true
        #expect(Self.push(&assembler, next).isEmpty)
        #expect(assembler.needsKeyframe)
    }

    @Test("a frame over the size bound is dropped")
    func oversize() {
        var assembler = VP8FrameAssembler(maxFrameBytes: 2_000)
        let frames = Self.push(&assembler, Self.packets(Self.keyframe(2_001, width: 16, height: 16), timestamp: 0)
                                   + Self.packets(Self.keyframe(2_000, width: 32, height: 32), timestamp: 3_000))
        #expect(frames.map(\.width) == [32])
        #expect(assembler.framesDropped == 1)
    }

    @Test("a real VP8 capture round-trips frame by frame, its size read from the key frame")
    func realCapture() throws {
        let file = try IVFFile(fixtureBytes("media/vp8-320x240.ivf"))
        #expect(file.frames.count > 10)
        var assembler = VP8FrameAssembler()
        var packets: [Packet] = []
        for (i, frame) in file.frames.enumerated() {
            packets += Self.packets(file.bytes[frame.range], timestamp: UInt32(i) * 3_000, maxPayload: 1_200)
        }
        #expect(packets.count > file.frames.count, "frames span several packets")
        let frames = Self.push(&assembler, packets)
        #expect(frames.map(\.bytes) == file.frames.map { Array(file.bytes[$0.range]) })
        let first = try #require(frames.first)
        #expect(first.keyframe && first.width == 320 && first.height == 240)
        let size = try #require(VP8FrameAssembler.pictureSize(first.bytes))
        #expect(size.width == 320 && size.height == 240)
    }

    @Test("garbage, truncated and empty payloads never crash, and a key frame still assembles after them")
    func garbage() {
        var assembler = VP8FrameAssembler()
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for _ in 0..<5_000 {
            let payload = (0..<Int(next() % 24)).map { _ in UInt8(truncatingIfNeeded: next()) }
            _ = payload.withUnsafeBytes {
                assembler.push(timestamp: UInt32(next() % 4), marker: next() % 3 == 0, gapBefore: next() % 5 == 0, payload: $0)
            }
        }
        for cut in 0..<6 {
            let payload = Array(Self.packets(Self.keyframe(300, width: 8, height: 8), timestamp: 100)[0].payload.prefix(cut))
            _ = payload.withUnsafeBytes { assembler.push(timestamp: 100, marker: true, gapBefore: false, payload: $0) }
        }
        _ = assembler.push(timestamp: 200, marker: true, gapBefore: false, payload: UnsafeRawBufferPointer(start: nil, count: 0))
        let frames = Self.push(&assembler, Self.packets(Self.keyframe(300, width: 8, height: 8), timestamp: 300))
        #expect(frames.map(\.width) == [8])
    }
}
