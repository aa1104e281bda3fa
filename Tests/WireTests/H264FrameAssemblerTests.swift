import Testing
@testable import Wire

@Suite("H.264 access unit assembly")
struct H264FrameAssemblerTests {
    struct Packet {
        var timestamp: UInt32
        var marker: Bool
        var gapBefore = false
        var payload: [UInt8]
    }

    /// A NAL unit of `type` (NRI 3) and `size` bytes in all.
    static func nal(_ type: UInt8, _ size: Int) -> [UInt8] {
        [0x60 | type] + (1..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(type)) }
    }

    /// RFC 6184 mode 1 as a browser sends it: small NAL units together in a STAP-A, large ones in FU-As.
    static func packets(_ nals: [[UInt8]], timestamp: UInt32, mtu: Int = 300) -> [[UInt8]] {
        var out: [[UInt8]] = []
        var stap: [[UInt8]] = []
        func flush() {
            guard !stap.isEmpty else { return }
            if stap.count == 1 {
                out.append(stap[0])
            } else {
                var packet: [UInt8] = [0x78]
                for nal in stap { packet += [UInt8(nal.count >> 8), UInt8(nal.count & 0xFF)] + nal }
                out.append(packet)
            }
            stap = []
        }
        for nal in nals {
            if nal.count <= 100 {
                stap.append(nal)
                continue
            }
            flush()
            let body = Array(nal.dropFirst())
            var at = 0
            while at < body.count {
                let n = min(mtu - 2, body.count - at)
                let start: UInt8 = at == 0 ? 0x80 : 0, end: UInt8 = at + n == body.count ? 0x40 : 0
                let indicator: UInt8 = nal[0] & 0xE0 | 28
                out.append([indicator, start | end | nal[0] & 0x1F] + body[at..<at + n])
                at += n
            }
        }
        flush()
        return out
    }

    static func unit(_ nals: [[UInt8]], timestamp: UInt32) -> [Packet] {
        let payloads = packets(nals, timestamp: timestamp)
        return payloads.enumerated().map { Packet(timestamp: timestamp, marker: $0.offset == payloads.count - 1, payload: $0.element) }
    }

    static func annexB(_ nals: [[UInt8]]) -> [UInt8] { nals.flatMap { H264FrameAssembler.startCode + $0 } }

    static func push(_ assembler: inout H264FrameAssembler, _ packets: [Packet]) -> [H264FrameAssembler.Frame] {
        packets.compactMap { p in
            p.payload.withUnsafeBytes { assembler.push(timestamp: p.timestamp, marker: p.marker, gapBefore: p.gapBefore, payload: $0) }
        }
    }

    static let idr = [nal(7, 12), nal(8, 5), nal(5, 900)]
    static let slice = [nal(1, 400)]

    @Test("single NAL units, STAP-A and FU-A come back as one Annex B unit per timestamp, the IDR one a key frame")
    func assembles() {
        var a = H264FrameAssembler()
        let frames = Self.push(&a, Self.unit(Self.idr, timestamp: 3_000) + Self.unit(Self.slice, timestamp: 6_000)
                                    + Self.unit([Self.nal(1, 60)], timestamp: 9_000))
        #expect(frames == [H264FrameAssembler.Frame(bytes: Self.annexB(Self.idr), timestamp: 3_000, keyframe: true),
                           H264FrameAssembler.Frame(bytes: Self.annexB(Self.slice), timestamp: 6_000, keyframe: false),
                           H264FrameAssembler.Frame(bytes: Self.annexB([Self.nal(1, 60)]), timestamp: 9_000, keyframe: false)])
        #expect(Self.unit(Self.idr, timestamp: 0).count == 5, "SPS and PPS in a STAP-A, the IDR in four FU-As")
    }

    @Test("a unit's NAL units, length-prefixed for Matroska, and its avcC from the parameter sets")
    func containerForms() throws {
        var a = H264FrameAssembler()
        let sps: [UInt8] = [0x67, 0x42, 0xC0, 0x1F, 0xDA, 0x01], pps: [UInt8] = [0x68, 0xCE, 0x3C, 0x80]
        let unit = try #require(Self.push(&a, Self.unit([sps, pps, Self.nal(5, 300)], timestamp: 1)).first)
        #expect(unit.nalUnits.map(Array.init) == [sps, pps, Self.nal(5, 300)])
        #expect(unit.lengthPrefixed == [0, 0, 0, 6] + sps + [0, 0, 0, 4] + pps + [0, 0, 1, 44] + Self.nal(5, 300))
        #expect(unit.avcC == [1, 0x42, 0xC0, 0x1F, 0xFF, 0xE1, 0, 6] + sps + [1, 0, 4] + pps)
        let slice = try #require(Self.push(&a, Self.unit(Self.slice, timestamp: 2)).first)
        #expect(slice.avcC == nil, "no parameter sets in a plain slice")
    }

    @Test("it starts at a key frame: the units before the first IDR are dropped")
    func startsAtKeyframe() {
        var a = H264FrameAssembler()
        let frames = Self.push(&a, Self.unit(Self.slice, timestamp: 1) + Self.unit(Self.idr, timestamp: 2) + Self.unit(Self.slice, timestamp: 3))
        #expect(frames.map(\.timestamp) == [2, 3] && a.framesDropped == 1 && !a.needsKeyframe)
    }

    @Test("a gap drops its unit and waits for the next key frame; a unit without its marker is dropped")
    func losses() {
        var a = H264FrameAssembler()
        var lossy = Self.unit(Self.idr, timestamp: 1) + Self.unit(Self.slice, timestamp: 2) + Self.unit(Self.slice, timestamp: 3)
            + Self.unit(Self.idr, timestamp: 4)
        lossy.remove(at: 6)  // the second FU-A of the unit at 2
        lossy[6].gapBefore = true
        var frames = Self.push(&a, lossy)
        #expect(frames.map(\.timestamp) == [1, 4], "2 lost a piece, 3 refers to it; 4 is a key frame")
        var noMarker = Self.unit(Self.slice, timestamp: 5)
        noMarker[noMarker.count - 1].marker = false
        frames = Self.push(&a, noMarker + Self.unit(Self.slice, timestamp: 6) + Self.unit(Self.idr, timestamp: 7))
        #expect(frames.map(\.timestamp) == [7])
    }

    @Test("malformed payloads are dropped, never a crash: truncated STAP-A, FU-A without a start, reserved types")
    func malformed() {
        for bad: [UInt8] in [[0x78, 0x00, 0x09, 0x65], [0x78], [0x7C, 0x05, 1, 2, 3], [0x7C, 0x85], [0x79, 1, 2], [0x7D, 0x80, 1], [0x60]] {
            var a = H264FrameAssembler()
            _ = Self.push(&a, Self.unit(Self.idr, timestamp: 1))
            let frames = Self.push(&a, [Packet(timestamp: 2, marker: true, payload: bad)] + Self.unit(Self.slice, timestamp: 3))
            #expect(frames.isEmpty && a.needsKeyframe, "\(bad)")
        }
        var small = H264FrameAssembler(maxFrameBytes: 500)
        #expect(Self.push(&small, Self.unit(Self.idr, timestamp: 1)).isEmpty, "larger than the bound")
    }
}
