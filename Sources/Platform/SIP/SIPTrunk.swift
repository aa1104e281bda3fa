/// A SIP trunk as stored: the carrier calls to numbers come from and calls to the PSTN go through.
public struct SIPTrunk: Sendable, Equatable {
    public var id: String
    public var name: String
    public var host: String
    public var port: Int
    /// `udp` or `tcp`.
    public var transport: String
    public var username: String?
    /// Kept as given: the digest client needs it to answer the carrier's challenges.
    public var password: String?
    /// Register with the carrier (outbound registration).
    public var register: Bool
    /// Hosts and CIDR ranges calls from this trunk may come from, besides `host`.
    public var allow: [String]
    /// Seconds between OPTIONS health checks; 0 turns them off.
    public var healthInterval: Int
    /// `none` (plain RTP offered; SRTP used when the carrier offers it), `optional` (RTP/AVP offered with
    /// SDES keys, SRTP when the carrier keys its answer) or `srtp` (RTP/SAVP with keys offered and required);
    /// the last two need `transport` `tls`.
    public var mediaEncryption: String
    /// How the keys an application sends reach the carrier: `rfc4733` (telephone events in the RTP) or `info`
    /// (SIP INFO, `application/dtmf-relay`, for carriers and PBXes that want them in the signalling).
    public var dtmf: String = "rfc4733"
    public var createdAt: Int64
    public var updatedAt: Int64
}
