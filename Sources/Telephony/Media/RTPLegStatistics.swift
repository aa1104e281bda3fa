/// Counters of one RTP leg.
public struct RTPLegStatistics: Hashable, Sendable {
    public var packetsReceived = 0
    public var packetsSent = 0
    public var octetsSent = 0
    /// Packets dropped: not RTP, wrong payload type, undecodable.
    public var packetsDropped = 0
    /// Packets lost, from sequence gaps.
    public var packetsLost = 0
    public var framesDecoded = 0
    public var eventsReceived = 0
    public var rtcpReceived = 0
    public var rtcpSent = 0
    /// Times the remote address was (re)learnt from where packets really come from.
    public var latches = 0
    /// SRTP or SRTCP packets that failed authentication or replay checks, dropped.
    public var srtpFailures = 0
    /// DTLS-SRTP handshakes that keyed a port (two per leg: RTP's and RTCP's), and those that failed.
    public var dtlsHandshakes = 0
    public var dtlsFailures = 0
    public init() {}
}
