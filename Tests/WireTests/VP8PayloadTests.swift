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
}
