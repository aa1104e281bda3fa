/// The header-extension block of an RTP packet (RFC 3550 §5.3.1, RFC 8285 §4).
///
/// With profile 0xBEDE (one-byte) or 0x100X (two-byte) the block is a list of
/// elements; any other profile is kept as opaque words in `rawData`.
public struct RTPHeaderExtension: Hashable, Sendable {
    public var profile: UInt16
    public var elements: [RTPHeaderExtensionElement]
    /// Block contents for profiles other than RFC 8285 ones.
    public var rawData: [UInt8]

    public init(profile: UInt16, elements: [RTPHeaderExtensionElement] = [], rawData: [UInt8] = []) {
        self.profile = profile
        self.elements = elements
        self.rawData = rawData
    }

    /// One-byte form (ids 1-14, values 1-16 bytes), what browsers send by default.
    public static func oneByte(_ elements: [RTPHeaderExtensionElement]) -> RTPHeaderExtension {
        RTPHeaderExtension(profile: RTPView.oneByteProfile, elements: elements)
    }

    /// Two-byte form (ids 1-255, values 0-255 bytes), needed with `extmap-allow-mixed`.
    public static func twoByte(_ elements: [RTPHeaderExtensionElement], appBits: UInt8 = 0) -> RTPHeaderExtension {
        RTPHeaderExtension(profile: RTPView.twoByteProfile | UInt16(appBits & 0x0F), elements: elements)
    }

    public var isOneByte: Bool { profile == RTPView.oneByteProfile }
    public var isTwoByte: Bool { profile & 0xFFF0 == RTPView.twoByteProfile }

    /// Value of the first element with `id`.
    public func element(id: UInt8) -> [UInt8]? {
        elements.first { $0.id == id }?.value
    }

    /// Replaces or appends the element with `id`.
    public mutating func set(id: UInt8, value: [UInt8]) {
        if let index = elements.firstIndex(where: { $0.id == id }) {
            elements[index].value = value
        } else {
            elements.append(RTPHeaderExtensionElement(id: id, value: value))
        }
    }

    /// Appends the 4-byte block header and padded data.
    func serialize(into out: inout [UInt8]) throws(RTPError) {
        let start = out.count
        PacketBytes.append16(&out, profile)
        PacketBytes.append16(&out, 0)
        if isOneByte {
            for element in elements {
                guard (1...14).contains(element.id), (1...16).contains(element.value.count) else {
                    throw .invalidExtensionElement(id: element.id, length: element.value.count)
                }
                out.append(element.id << 4 | UInt8(element.value.count - 1))
                out.append(contentsOf: element.value)
            }
        } else if isTwoByte {
            for element in elements {
                guard element.id != 0, element.value.count <= 255 else {
                    throw .invalidExtensionElement(id: element.id, length: element.value.count)
                }
                out.append(element.id)
                out.append(UInt8(element.value.count))
                out.append(contentsOf: element.value)
            }
        } else {
            out.append(contentsOf: rawData)
        }
        while (out.count - start) % 4 != 0 { out.append(0) }
        let words = (out.count - start - 4) / 4
        guard words <= 0xFFFF else { throw .headerExtensionTooLong(out.count - start - 4) }
        PacketBytes.set16(&out, start + 2, UInt16(words))
    }

    /// Decodes the block described by `view`; malformed elements are an error here
    /// (the in-place `RTPView` accessors ignore them instead).
    static func parse(_ b: UnsafeRawBufferPointer, view: RTPView) throws(RTPError) -> RTPHeaderExtension? {
        guard let profile = view.extensionProfile else { return nil }
        var block = RTPHeaderExtension(profile: profile)
        let start = view.extensionOffset, end = start + view.extensionLength
        if block.isOneByte || block.isTwoByte {
            var o = start
            while o < end {
                let id = block.isOneByte ? b[o] >> 4 : b[o]
                if id == 0 { o += 1; continue }
                if block.isOneByte && id == 15 { break }
                let headerSize = block.isOneByte ? 1 : 2
                guard o + headerSize <= end else { throw .invalidExtensionElement(id: id, length: 0) }
                let length = block.isOneByte ? Int(b[o] & 0x0F) + 1 : Int(b[o + 1])
                guard o + headerSize + length <= end else { throw .invalidExtensionElement(id: id, length: length) }
                let value = UnsafeRawBufferPointer(rebasing: b[(o + headerSize)..<(o + headerSize + length)])
                block.elements.append(RTPHeaderExtensionElement(id: id, value: Array(value)))
                o += headerSize + length
            }
        } else {
            block.rawData = Array(UnsafeRawBufferPointer(rebasing: b[start..<end]))
        }
        return block
    }
}

/// One RFC 8285 extension element: the id negotiated by `a=extmap` and its value.
public struct RTPHeaderExtensionElement: Hashable, Sendable {
    public var id: UInt8
    public var value: [UInt8]

    public init(id: UInt8, value: [UInt8]) {
        self.id = id
        self.value = value
    }

    /// RFC 6464 client-to-mixer audio level: V bit plus level in -dBov (0-127).
    public static func audioLevel(id: UInt8, voiceActivity: Bool, level: UInt8) -> RTPHeaderExtensionElement {
        RTPHeaderExtensionElement(id: id, value: [(voiceActivity ? 0x80 : 0) | min(level, 127)])
    }

    /// abs-send-time: 24-bit 6.18 fixed-point seconds.
    public static func absSendTime(id: UInt8, _ value: UInt32) -> RTPHeaderExtensionElement {
        var bytes: [UInt8] = []
        PacketBytes.append24(&bytes, value & 0xFF_FFFF)
        return RTPHeaderExtensionElement(id: id, value: bytes)
    }

    /// transport-wide-cc 16-bit sequence number.
    public static func transportSequenceNumber(id: UInt8, _ value: UInt16) -> RTPHeaderExtensionElement {
        RTPHeaderExtensionElement(id: id, value: [UInt8(value >> 8), UInt8(value & 0xFF)])
    }

    /// SDES MID / RID string (RFC 8843 §15, RFC 8852).
    public static func mid(id: UInt8, _ mid: String) -> RTPHeaderExtensionElement {
        RTPHeaderExtensionElement(id: id, value: Array(mid.utf8))
    }

    public var audioLevel: (voiceActivity: Bool, level: UInt8)? {
        value.isEmpty ? nil : (value[0] & 0x80 != 0, value[0] & 0x7F)
    }

    public var absSendTime: UInt32? {
        value.count < 3 ? nil : UInt32(value[0]) << 16 | UInt32(value[1]) << 8 | UInt32(value[2])
    }

    /// A time in nanoseconds as abs-send-time: 6.18 fixed-point seconds, wrapping every 64 s.
    @inlinable
    public static func absSendTime(nanoseconds: UInt64) -> UInt32 {
        UInt32(truncatingIfNeeded: (nanoseconds / 1_000 % 64_000_000) << 18 / 1_000_000)
    }

    public var transportSequenceNumber: UInt16? {
        value.count < 2 ? nil : UInt16(value[0]) << 8 | UInt16(value[1])
    }

    public var string: String { String(decoding: value, as: UTF8.self) }
}

/// Header-extension URIs negotiated with `a=extmap` that the media plane understands.
public enum RTPExtensionURI {
    public static let audioLevel = "urn:ietf:params:rtp-hdrext:ssrc-audio-level"
    public static let absSendTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-send-time"
    public static let transportWideCC = "http://www.ietf.org/id/draft-holmer-rmcat-transport-wide-cc-extensions-01"
    public static let mid = "urn:ietf:params:rtp-hdrext:sdes:mid"
    public static let rtpStreamID = "urn:ietf:params:rtp-hdrext:sdes:rtp-stream-id"
    public static let repairedRTPStreamID = "urn:ietf:params:rtp-hdrext:sdes:repaired-rtp-stream-id"
    public static let transmissionOffset = "urn:ietf:params:rtp-hdrext:toffset"
    public static let videoOrientation = "urn:3gpp:video-orientation"
    public static let playoutDelay = "http://www.webrtc.org/experiments/rtp-hdrext/playout-delay"
    public static let absCaptureTime = "http://www.webrtc.org/experiments/rtp-hdrext/abs-capture-time"
}
