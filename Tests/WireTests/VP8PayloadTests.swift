import Testing
@testable import Wire

@Suite("VP8 payloads and IVF files")
struct VP8PayloadTests {
    /// A frame whose first byte marks a key frame (P bit 0) or a delta frame (1).
    static func frame(_ size: Int, key: Bool) -> [UInt8] {
        (0..<size).map { i in i == 0 ? (key ? 0x10 : 0x11) : UInt8(truncatingIfNeeded: i &* 31) }
    }

    @Test("a frame splits into even packets that reassemble to the same bytes", arguments: [1, 1146, 1147, 3000, 20_000])
    func packetizeRoundTrip(size: Int) throws {
        let data = Self.frame(size, key: true)
        let payloads = VP8Packetizer.packetize(data, maxPayload: 1150)
        #expect(payloads.count == (size + 1145) / 1146)
        #expect(payloads.allSatisfy { $0.count <= 1150 })
        let sizes = payloads.map(\.count)
        #expect(sizes.max()! - sizes.min()! <= 1)
        var rebuilt: [UInt8] = []
        for (i, var payload) in payloads.enumerated() {
            payload.withUnsafeMutableBytes { VP8Packetizer.stampPictureID(0x1234, in: $0.baseAddress!) }
            let descriptor = try #require(payload.withUnsafeBytes { VP8PayloadDescriptor($0.baseAddress!, length: $0.count) })
            #expect(descriptor.startOfPartition == (i == 0))
            #expect(descriptor.partitionID == 0)
            #expect(descriptor.pictureID == 0x1234)
            #expect(descriptor.length == 4)
            #expect(payload.withUnsafeBytes { VP8PayloadDescriptor.startsKeyframe($0.baseAddress!, length: $0.count) } == (i == 0))
            rebuilt += payload[descriptor.length...]
        }
        #expect(rebuilt == data)
    }

    @Test("a delta frame is not a key frame; 7-bit PictureIDs and truncated descriptors parse as the RFC says")
    func descriptors() {
        let delta = VP8Packetizer.packetize(Self.frame(500, key: false), maxPayload: 1150)[0]
        #expect(delta.withUnsafeBytes { VP8PayloadDescriptor.startsKeyframe($0.baseAddress!, length: $0.count) } == false)
        // X=1 S=1; I=1 L=1; 7-bit PictureID 0x2A; TL0PICIDX; then a key frame byte.
        let short: [UInt8] = [0x90, 0xC0, 0x2A, 0x07, 0x10]
        let d = short.withUnsafeBytes { VP8PayloadDescriptor($0.baseAddress!, length: $0.count) }
        #expect(d?.pictureID == 0x2A && d?.length == 4)
        #expect(short.withUnsafeBytes { VP8PayloadDescriptor.startsKeyframe($0.baseAddress!, length: $0.count) })
        for cut in 1..<4 {
            #expect(short.withUnsafeBytes { VP8PayloadDescriptor.startsKeyframe($0.baseAddress!, length: cut) } == false)
        }
        #expect(short.withUnsafeBytes { VP8PayloadDescriptor($0.baseAddress!, length: 2) } == nil)
    }

    static func ivf(frames: [[UInt8]], rate: UInt32 = 30) -> [UInt8] {
        func le(_ v: UInt64, _ n: Int) -> [UInt8] { (0..<n).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
        var bytes = Array("DKIF".utf8) + le(0, 2) + le(32, 2) + Array("VP80".utf8) + le(1280, 2) + le(720, 2)
        bytes += le(UInt64(rate), 4) + le(1, 4) + le(UInt64(frames.count), 4) + le(0, 4)
        for (i, frame) in frames.enumerated() { bytes += le(UInt64(frame.count), 4) + le(UInt64(i), 8) + frame }
        return bytes
    }

    @Test("an IVF file gives its size, time base and frames")
    func ivfFile() throws {
        let frames = [Self.frame(4000, key: true), Self.frame(900, key: false), Self.frame(1200, key: false)]
        let file = try IVFFile(Self.ivf(frames: frames))
        #expect(file.fourCC == "VP80" && file.width == 1280 && file.height == 720)
        #expect(file.frames.count == 3)
        #expect(file.frames.map { Array(file.bytes[$0.range]) } == frames)
        #expect(file.nanoseconds(file.frames[2]) == 66_666_666)
    }

    @Test("a damaged IVF file is refused, never read past its end")
    func damagedIVF() {
        let good = Self.ivf(frames: [Self.frame(100, key: true), Self.frame(50, key: false)])
        #expect(throws: IVFFile.ParseError.notIVF) { try IVFFile(Array("RIFF".utf8) + good.dropFirst(4)) }
        #expect(throws: IVFFile.ParseError.notIVF) { try IVFFile(Array(good.prefix(20))) }
        #expect(throws: IVFFile.ParseError.truncatedFrame(index: 1)) { try IVFFile(Array(good.dropLast(1))) }
        #expect(throws: IVFFile.ParseError.truncatedFrame(index: 1)) { try IVFFile(Array(good.prefix(32 + 12 + 100 + 5))) }
        var zeroRate = good
        zeroRate[16] = 0
        #expect(throws: IVFFile.ParseError.badHeader("time base 1/0")) { try IVFFile(zeroRate) }
    }

    @Test("a key frame's first packet declares its picture size; delta frames, later packets and other bytes do not")
    func keyframeSize() {
        // Descriptor (X=1, I=1, 15-bit PictureID), frame tag (key frame), start code, 14-bit sizes with scaling bits set.
        let key: [UInt8] = [0x90, 0x80, 0x81, 0x23, 0x50, 0x02, 0x00, 0x9D, 0x01, 0x2A, 0xC0, 0xC3, 0x1C, 0x42, 0x00]
        func size(_ bytes: [UInt8]) -> (width: Int, height: Int)? {
            bytes.withUnsafeBytes { VP8PayloadDescriptor.keyframeSize($0.baseAddress!, length: $0.count) }
        }
        #expect(size(key)?.width == 960 && size(key)?.height == 540)
        var delta = key
        delta[4] |= 0x01
        #expect(size(delta) == nil)
        var later = key
        later[0] = 0x80
        #expect(size(later) == nil)
        var noStartCode = key
        noStartCode[7] = 0
        #expect(size(noStartCode) == nil)
        for cut in 0..<(key.count - 1) { #expect(size(Array(key.prefix(cut))) == nil) }
    }

    @Test("a simulcast m-line's send streams are its rids in order: first alternatives, paused ones, no undeclared or bad ids")
    func simulcastStreams() throws {
        func streams(_ lines: String) throws -> [String] {
            let sdp = "v=0\r\no=- 1 2 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=video 9 UDP/TLS/RTP/SAVPF 96\r\na=mid:0\r\n" + lines
            return try SessionDescription.parse(sdp).media[0].simulcastSendStreams
        }
        #expect(try streams("a=rid:q send\r\na=rid:h send\r\na=rid:f send\r\na=simulcast:send q;h;f\r\n") == ["q", "h", "f"])
        #expect(try streams("a=rid:1 send\r\na=rid:2 send\r\na=rid:3 send\r\na=simulcast:send 1,2;~3\r\n") == ["1", "3"])
        #expect(try streams("a=rid:a send\r\na=rid:b recv\r\na=rid:c send\r\na=simulcast:send a;b;c recv b\r\n") == ["a", "c"])
        #expect(try streams("a=rid:a send\r\na=simulcast:send a;a\r\n").isEmpty)
        #expect(try streams("a=rid:a send\r\na=rid:b send\r\na=simulcast:recv a;b\r\n").isEmpty)
        #expect(try streams("a=rid:a send\r\na=rid:b send\r\n").isEmpty)
        #expect(try streams("a=rid:a send\r\na=rid:a.b send\r\na=rid:c send\r\na=simulcast:send a;a.b;c\r\n") == ["a", "c"])
        let many = (0..<6).map { "a=rid:r\($0) send\r\n" }.joined() + "a=simulcast:send " + (0..<6).map { "r\($0)" }.joined(separator: ";") + "\r\n"
        #expect(try streams(many) == ["r0", "r1", "r2", "r3"])
        #expect(try streams("a=rid:\(String(repeating: "x", count: 17)) send\r\na=rid:b send\r\na=rid:c send\r\na=simulcast:send \(String(repeating: "x", count: 17));b;c\r\n") == ["b", "c"])
    }
}
