/// The decoded fixed header, CSRC list and extension block of an RTP packet (RFC 3550 §5.1).
///
/// See `RTPView` for the packet diagram and for non-allocating access.
public struct RTPHeader: Hashable, Sendable {
    public var marker: Bool
    /// 7-bit payload type.
    public var payloadType: UInt8
    public var sequenceNumber: UInt16
    public var timestamp: UInt32
    public var ssrc: UInt32
    public var csrcs: [UInt32]
    public var headerExtension: RTPHeaderExtension?

    public init(
        marker: Bool = false, payloadType: UInt8, sequenceNumber: UInt16, timestamp: UInt32, ssrc: UInt32,
        csrcs: [UInt32] = [], headerExtension: RTPHeaderExtension? = nil
    ) {
        self.marker = marker
        self.payloadType = payloadType
        self.sequenceNumber = sequenceNumber
        self.timestamp = timestamp
        self.ssrc = ssrc
        self.csrcs = csrcs
        self.headerExtension = headerExtension
    }

    /// Decodes the header of `bytes`, returning it with the packet layout.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(RTPError) -> (header: RTPHeader, layout: RTPView) {
        let view = try RTPView(bytes)
        var csrcs: [UInt32] = []
        if view.csrcCount > 0 {
            csrcs.reserveCapacity(view.csrcCount)
            for i in 0..<view.csrcCount { csrcs.append(PacketBytes.u32(bytes, 12 + 4 * i)) }
        }
        let header = RTPHeader(
            marker: view.marker, payloadType: view.payloadType, sequenceNumber: PacketBytes.u16(bytes, 2),
            timestamp: PacketBytes.u32(bytes, 4), ssrc: PacketBytes.u32(bytes, 8), csrcs: csrcs,
            headerExtension: try RTPHeaderExtension.parse(bytes, view: view))
        return (header, view)
    }

    /// Decodes the header of `bytes`, returning it with the packet layout.
    public static func parse(_ bytes: some ContiguousBytesView) throws(RTPError) -> (header: RTPHeader, layout: RTPView) {
        try PacketBytes.with(bytes) { (raw) throws(RTPError) in try parse(raw) }
    }

    /// Appends the encoded header; `padding` sets the P bit (the caller appends the padding).
    public func serialize(into out: inout [UInt8], padding: Bool = false) throws(RTPError) {
        guard csrcs.count <= 15 else { throw .tooManyCSRCs(csrcs.count) }
        out.append(0x80 | (padding ? 0x20 : 0) | (headerExtension != nil ? 0x10 : 0) | UInt8(csrcs.count))
        out.append((marker ? 0x80 : 0) | payloadType & 0x7F)
        PacketBytes.append16(&out, sequenceNumber)
        PacketBytes.append32(&out, timestamp)
        PacketBytes.append32(&out, ssrc)
        for csrc in csrcs { PacketBytes.append32(&out, csrc) }
        try headerExtension?.serialize(into: &out)
    }
}

/// A whole RTP packet as values: header, payload and padding (RFC 3550 §5.1).
///
/// For building packets and for tests; the forwarding path uses `RTPView` on the
/// receive buffer instead of copying into this.
public struct RTPPacket: Hashable, Sendable {
    public var header: RTPHeader
    public var payload: [UInt8]
    /// Padding bytes including the trailing count byte; 0 for none, at most 255.
    public var paddingLength: Int

    public init(header: RTPHeader, payload: [UInt8], paddingLength: Int = 0) {
        self.header = header
        self.payload = payload
        self.paddingLength = paddingLength
    }

    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(RTPError) -> RTPPacket {
        let (header, view) = try RTPHeader.parse(bytes)
        return RTPPacket(
            header: header, payload: Array(UnsafeRawBufferPointer(rebasing: bytes[view.payloadRange])),
            paddingLength: view.paddingLength)
    }

    public static func parse(_ bytes: some ContiguousBytesView) throws(RTPError) -> RTPPacket {
        try PacketBytes.with(bytes) { (raw) throws(RTPError) in try parse(raw) }
    }

    /// Encodes the packet; padding is zeros followed by the count byte.
    public func serialize() throws(RTPError) -> [UInt8] {
        guard (0...255).contains(paddingLength) else { throw .paddingTooLong(paddingLength) }
        var out: [UInt8] = []
        out.reserveCapacity(12 + 4 * header.csrcs.count + payload.count + paddingLength + 32)
        try header.serialize(into: &out, padding: paddingLength > 0)
        out.append(contentsOf: payload)
        if paddingLength > 0 {
            out.append(contentsOf: repeatElement(0, count: paddingLength - 1))
            out.append(UInt8(paddingLength))
        }
        return out
    }
}
