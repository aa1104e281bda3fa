import Wire

/// The outcome of a plain-RTP offer/answer: where to send, what to send, and which way.
public struct NegotiatedAudio: Hashable, Sendable {
    public var remoteAddress: String
    public var remotePort: UInt16
    public var codec: AudioCodec
    public var payloadType: UInt8
    public var telephoneEventPayloadType: UInt8?
    public var ptime: Int
    /// Our direction after negotiation (sendonly while we hold the peer, recvonly while it holds us).
    public var direction: SDPDirection
    /// SRTP keys when the media is encrypted (SDES), nil for plain RTP.
    public var srtp: SDESKeying?
    /// DTLS-SRTP: who starts the handshakes and whose certificate to expect; nil unless keyed by DTLS.
    public var dtls: DTLSKeying?
    /// RTCP on the RTP port (RFC 5761), both ways: both sides said `a=rtcp-mux`.
    public var rtcpMux = false

    public var sends: Bool { direction == .sendrecv || direction == .sendonly }
    public var receives: Bool { direction == .sendrecv || direction == .recvonly }
}
