import Runtime

/// SIP over TLS (RFC 3261 §26.2.1) for an endpoint: the port it listens on, the certificate it serves
/// (a server `TLSContext`) and how it verifies the peers it connects to (a client `TLSContext`).
public struct SIPTLSConfig: Sendable {
    /// The TLS listening port; 0 takes any free one.
    public var port: UInt16
    /// The server's certificate and key, as HTTPS serves them.
    public var server: TLSContext
    /// Outbound connections (trunks with `transport: tls`): verifies the peer's certificate against its
    /// CA store and the peer's numeric address.
    public var client: TLSContext
    /// A connection that has not finished its handshake by then is closed and counted.
    public var handshakeTimeout: Duration
    /// Whether a TLS port that cannot be bound fails the endpoint; when false it runs without TLS
    /// (`SIPEndpoint.tlsPort` nil), as a default port that happens to be busy should.
    public var required: Bool

    public init(port: UInt16, server: TLSContext, client: TLSContext, handshakeTimeout: Duration = .seconds(10), required: Bool = true) {
        self.port = port
        self.required = required
        self.server = server
        self.client = client
        self.handshakeTimeout = handshakeTimeout
    }
}
