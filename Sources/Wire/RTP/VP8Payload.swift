/// The VP8 RTP payload descriptor and packetizer (RFC 7741 §4.2).
///
/// ```
///   0 1 2 3 4 5 6 7
///  +-+-+-+-+-+-+-+-+
///  |X|R|N|S|R| PID | (REQUIRED)
///  +-+-+-+-+-+-+-+-+
///  |I|L|T|K| RSV   | (OPTIONAL, X=1)
///  |M| PictureID   | (OPTIONAL, I=1; M=1 adds a byte)
///  |   TL0PICIDX   | (OPTIONAL, L=1)
///  |TID|Y| KEYIDX  | (OPTIONAL, T=1 or K=1)
///  +-+-+-+-+-+-+-+-+
/// ```
///
/// The first packet of a frame has S=1 and PID=0, and the VP8 frame header follows the
/// descriptor; its first bit (P, RFC 6386 §9.1) is 0 for a key frame.
public struct VP8PayloadDescriptor: Hashable, Sendable {
    /// S: this packet starts a VP8 partition.
    public let startOfPartition: Bool
    /// PID: the partition index.
    public let partitionID: UInt8
    /// 7- or 15-bit PictureID when I=1.
    public let pictureID: UInt16?
    /// TID: the temporal layer of the frame when T=1 (0 the base), and Y: the frame depends only on the base
    /// layer's frames (a receiver may start taking the layer here).
    public let temporalLayer: UInt8?
    public let layerSync: Bool
    /// Descriptor bytes; the VP8 data starts here.
    public let length: Int

    /// Parses the descriptor at the start of an RTP payload; nil when it is truncated.
    @inlinable
    public init?(_ p: UnsafeRawPointer, length count: Int) {
        guard count >= 1 else { return nil }
        let b0 = p.load(as: UInt8.self)
        var o = 1
        var picture: UInt16?
        var temporal: UInt8?
        var sync = false
        if b0 & 0x80 != 0 {
            guard count > o else { return nil }
            let x = p.load(fromByteOffset: o, as: UInt8.self)
            o += 1
            if x & 0x80 != 0 {
                guard count > o else { return nil }
                let first = p.load(fromByteOffset: o, as: UInt8.self)
                if first & 0x80 != 0 {
                    guard count > o + 1 else { return nil }
                    picture = UInt16(first & 0x7F) << 8 | UInt16(p.load(fromByteOffset: o + 1, as: UInt8.self))
                    o += 2
                } else {
                    picture = UInt16(first)
                    o += 1
                }
            }
            if x & 0x40 != 0 { o += 1 }
            if x & 0x30 != 0 {
                guard count > o else { return nil }
                if x & 0x20 != 0 {
                    let tid = p.load(fromByteOffset: o, as: UInt8.self)
                    temporal = tid >> 6
                    sync = tid & 0x20 != 0
                }
                o += 1
            }
            guard count >= o else { return nil }
        }
        temporalLayer = temporal
        layerSync = sync
        startOfPartition = b0 & 0x10 != 0
        partitionID = b0 & 0x07
        pictureID = picture
        length = o
    }

    /// S=1 and PID=0: the packet carries the start of a frame.
    @inlinable
    public var startsFrame: Bool { startOfPartition && partitionID == 0 }

    /// Whether the payload this descriptor was read from (`p`, `count` bytes) starts a key frame: a frame's start
    /// whose header's P bit is clear.
    @inlinable
    public func startsKeyframe(in p: UnsafeRawPointer, length count: Int) -> Bool {
        startsFrame && count > length && p.load(fromByteOffset: length, as: UInt8.self) & 0x01 == 0
    }

    /// Whether a payload starts a key frame: S=1, PID=0 and the frame header's P bit clear.
    @inlinable
    public static func startsKeyframe(_ p: UnsafeRawPointer, length count: Int) -> Bool {
        VP8PayloadDescriptor(p, length: count)?.startsKeyframe(in: p, length: count) ?? false
    }

    /// The picture size a key frame's first packet declares (RFC 6386 §9.1: after the 3-byte frame
    /// tag, the start code 9D 01 2A, then 14-bit little-endian width and height); nil for any other packet.
    @inlinable
    public static func keyframeSize(_ p: UnsafeRawPointer, length count: Int) -> (width: Int, height: Int)? {
        guard startsKeyframe(p, length: count), let d = VP8PayloadDescriptor(p, length: count), count >= d.length + 10 else {
            return nil
        }
        let o = d.length
        guard p.load(fromByteOffset: o + 3, as: UInt8.self) == 0x9D, p.load(fromByteOffset: o + 4, as: UInt8.self) == 0x01,
              p.load(fromByteOffset: o + 5, as: UInt8.self) == 0x2A else { return nil }
        func u14(_ at: Int) -> Int {
            Int(p.load(fromByteOffset: at, as: UInt8.self)) | Int(p.load(fromByteOffset: at + 1, as: UInt8.self) & 0x3F) << 8
        }
        let width = u14(o + 6), height = u14(o + 8)
        return width > 0 && height > 0 ? (width, height) : nil
    }
}

/// Splits VP8 frames into RTP payloads the way WebRTC senders do: a 4-byte descriptor
/// (X=1, I=1, M=1: a 15-bit PictureID) in front of up to `maxPayload - 4` frame bytes,
/// S=1 on the first packet of each frame. The PictureID is left 0 for the sender to
/// stamp per frame (`stampPictureID`), so frames can be packetized once and sent many times.
public enum VP8Packetizer {
    public static let descriptorLength = 4

    /// The payloads for one frame, in order; the last one carries the RTP marker bit.
    public static func packetize(_ frame: some Collection<UInt8>, maxPayload: Int) -> [[UInt8]] {
        precondition(maxPayload > descriptorLength)
        let data = Array(frame)
        let room = maxPayload - descriptorLength
        // Even sizes, as libwebrtc does, instead of full packets and a short tail.
        let packets = max(1, (data.count + room - 1) / room)
        let base = data.count / packets
        let extra = data.count % packets
        var result: [[UInt8]] = []
        result.reserveCapacity(packets)
        var offset = 0
        for i in 0..<packets {
            let size = base + (i < extra ? 1 : 0)
            var payload: [UInt8] = [i == 0 ? 0x90 : 0x80, 0x80, 0x80, 0x00]
            payload.append(contentsOf: data[offset..<(offset + size)])
            result.append(payload)
            offset += size
        }
        return result
    }

    /// Writes a 15-bit PictureID into a payload made by `packetize`.
    @inline(__always)
    public static func stampPictureID(_ id: UInt16, in payload: UnsafeMutableRawPointer) {
        payload.storeBytes(of: 0x80 | UInt8(truncatingIfNeeded: id >> 8 & 0x7F), toByteOffset: 2, as: UInt8.self)
        payload.storeBytes(of: UInt8(truncatingIfNeeded: id), toByteOffset: 3, as: UInt8.self)
    }
}
