/// A reception report block (RFC 3550 §6.4.1), shared by SR and RR.
///
/// ```
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// |                 SSRC_n (SSRC of source n)                     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// | fraction lost |       cumulative number of packets lost       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |           extended highest sequence number received           |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                      interarrival jitter                      |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                         last SR (LSR)                         |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                   delay since last SR (DLSR)                  |
/// +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
public struct ReportBlock: Hashable, Sendable {
    public var ssrc: UInt32
    /// Fraction lost since the last report, in 1/256 units.
    public var fractionLost: UInt8
    /// Signed 24-bit cumulative loss (negative when duplicates outnumber losses).
    public var cumulativeLost: Int32
    public var extendedHighestSequence: UInt32
    public var jitter: UInt32
    /// Middle 32 bits of the NTP timestamp of the last SR received.
    public var lastSenderReport: UInt32
    /// In 1/65536 seconds.
    public var delaySinceLastSenderReport: UInt32

    public init(
        ssrc: UInt32, fractionLost: UInt8 = 0, cumulativeLost: Int32 = 0, extendedHighestSequence: UInt32 = 0,
        jitter: UInt32 = 0, lastSenderReport: UInt32 = 0, delaySinceLastSenderReport: UInt32 = 0
    ) {
        self.ssrc = ssrc
        self.fractionLost = fractionLost
        self.cumulativeLost = cumulativeLost
        self.extendedHighestSequence = extendedHighestSequence
        self.jitter = jitter
        self.lastSenderReport = lastSenderReport
        self.delaySinceLastSenderReport = delaySinceLastSenderReport
    }

    static let size = 24

    init(_ b: UnsafeRawBufferPointer, at o: Int) {
        ssrc = PacketBytes.u32(b, o)
        fractionLost = b[o + 4]
        let lost = PacketBytes.u24(b, o + 5)
        cumulativeLost = Int32(bitPattern: lost << 8) >> 8
        extendedHighestSequence = PacketBytes.u32(b, o + 8)
        jitter = PacketBytes.u32(b, o + 12)
        lastSenderReport = PacketBytes.u32(b, o + 16)
        delaySinceLastSenderReport = PacketBytes.u32(b, o + 20)
    }

    func serialize(into out: inout [UInt8]) {
        PacketBytes.append32(&out, ssrc)
        out.append(fractionLost)
        let clamped = min(max(cumulativeLost, -0x80_0000), 0x7F_FFFF)
        PacketBytes.append24(&out, UInt32(bitPattern: clamped) & 0xFF_FFFF)
        PacketBytes.append32(&out, extendedHighestSequence)
        PacketBytes.append32(&out, jitter)
        PacketBytes.append32(&out, lastSenderReport)
        PacketBytes.append32(&out, delaySinceLastSenderReport)
    }

    static func parseList(
        _ b: UnsafeRawBufferPointer, at start: Int, count: Int, type: RTCPPacketType
    ) throws(RTCPError) -> [ReportBlock] {
        try b.requireRTCP(start + count * size, type: type)
        return (0..<count).map { ReportBlock(b, at: start + $0 * size) }
    }

    static func checkCount(_ reports: [ReportBlock], type: RTCPPacketType) throws(RTCPError) -> UInt8 {
        guard reports.count <= 31 else { throw .overflow(packetType: type.rawValue, detail: "\(reports.count) report blocks > 31") }
        return UInt8(reports.count)
    }
}

/// Sender report (RFC 3550 §6.4.1).
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    RC   |   PT=SR=200   |             length            |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                         SSRC of sender                        |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// sender |              NTP timestamp, most significant word             |
/// info   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |             NTP timestamp, least significant word             |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                         RTP timestamp                         |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                     sender's packet count                     |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |                      sender's octet count                     |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///        |              report blocks (RC × 24 bytes) ...                |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
///        |                  profile-specific extensions                  |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct SenderReport: Hashable, Sendable {
    public var ssrc: UInt32
    /// 64-bit NTP timestamp (seconds since 1900 in the high word, fraction in the low).
    public var ntpTimestamp: UInt64
    public var rtpTimestamp: UInt32
    public var packetCount: UInt32
    public var octetCount: UInt32
    public var reports: [ReportBlock]
    public var profileExtensions: [UInt8]

    public init(
        ssrc: UInt32, ntpTimestamp: UInt64, rtpTimestamp: UInt32, packetCount: UInt32, octetCount: UInt32,
        reports: [ReportBlock] = [], profileExtensions: [UInt8] = []
    ) {
        self.ssrc = ssrc
        self.ntpTimestamp = ntpTimestamp
        self.rtpTimestamp = rtpTimestamp
        self.packetCount = packetCount
        self.octetCount = octetCount
        self.reports = reports
        self.profileExtensions = profileExtensions
    }

    /// The middle 32 bits of the NTP timestamp, echoed as LSR in report blocks.
    public var compactNTP: UInt32 { UInt32(truncatingIfNeeded: ntpTimestamp >> 16) }

    init(count: UInt8, body b: UnsafeRawBufferPointer) throws(RTCPError) {
        try b.requireRTCP(24, type: .senderReport)
        ssrc = PacketBytes.u32(b, 0)
        ntpTimestamp = PacketBytes.u64(b, 4)
        rtpTimestamp = PacketBytes.u32(b, 12)
        packetCount = PacketBytes.u32(b, 16)
        octetCount = PacketBytes.u32(b, 20)
        reports = try ReportBlock.parseList(b, at: 24, count: Int(count), type: .senderReport)
        profileExtensions = Array(UnsafeRawBufferPointer(rebasing: b[(24 + Int(count) * ReportBlock.size)...]))
    }

    func serializeBody(into out: inout [UInt8]) throws(RTCPError) -> UInt8 {
        let count = try ReportBlock.checkCount(reports, type: .senderReport)
        PacketBytes.append32(&out, ssrc)
        PacketBytes.append64(&out, ntpTimestamp)
        PacketBytes.append32(&out, rtpTimestamp)
        PacketBytes.append32(&out, packetCount)
        PacketBytes.append32(&out, octetCount)
        for report in reports { report.serialize(into: &out) }
        out.append(contentsOf: profileExtensions)
        return count
    }
}

/// Receiver report (RFC 3550 §6.4.2): the SR layout without sender info.
///
/// ```
/// |V=2|P|    RC   |   PT=RR=201   |             length            |
/// |                     SSRC of packet sender                     |
/// |              report blocks (RC × 24 bytes) ...                |
/// |                  profile-specific extensions                  |
/// ```
public struct ReceiverReport: Hashable, Sendable {
    public var ssrc: UInt32
    public var reports: [ReportBlock]
    public var profileExtensions: [UInt8]

    public init(ssrc: UInt32, reports: [ReportBlock] = [], profileExtensions: [UInt8] = []) {
        self.ssrc = ssrc
        self.reports = reports
        self.profileExtensions = profileExtensions
    }

    init(count: UInt8, body b: UnsafeRawBufferPointer) throws(RTCPError) {
        try b.requireRTCP(4, type: .receiverReport)
        ssrc = PacketBytes.u32(b, 0)
        reports = try ReportBlock.parseList(b, at: 4, count: Int(count), type: .receiverReport)
        profileExtensions = Array(UnsafeRawBufferPointer(rebasing: b[(4 + Int(count) * ReportBlock.size)...]))
    }

    func serializeBody(into out: inout [UInt8]) throws(RTCPError) -> UInt8 {
        let count = try ReportBlock.checkCount(reports, type: .receiverReport)
        PacketBytes.append32(&out, ssrc)
        for report in reports { report.serialize(into: &out) }
        out.append(contentsOf: profileExtensions)
        return count
    }
}
