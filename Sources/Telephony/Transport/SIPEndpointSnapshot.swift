/// What `/metrics` reads about a SIP endpoint, copied after each batch of work on its loop.
public struct SIPEndpointSnapshot: Hashable, Sendable {
    public var statistics = SIPStatistics()
    public var trunks: [TrunkStatus] = []
    public var transactions = 0
    public var calls = 0
    public var bindings = 0
    /// Open SIP-over-TCP connections.
    public var connections = 0
    /// Open SIP-over-TLS connections (handshaking or established).
    public var tlsConnections = 0
    /// TLS connections closed because their handshake failed, or did not finish within the timeout.
    public var tlsHandshakeFailures = 0
    public var tlsHandshakeTimeouts = 0

    public init(statistics: SIPStatistics = SIPStatistics(), trunks: [TrunkStatus] = [], transactions: Int = 0, calls: Int = 0,
                bindings: Int = 0, connections: Int = 0, tlsConnections: Int = 0, tlsHandshakeFailures: Int = 0,
                tlsHandshakeTimeouts: Int = 0) {
        self.statistics = statistics
        self.trunks = trunks
        self.transactions = transactions
        self.calls = calls
        self.bindings = bindings
        self.connections = connections
        self.tlsConnections = tlsConnections
        self.tlsHandshakeFailures = tlsHandshakeFailures
        self.tlsHandshakeTimeouts = tlsHandshakeTimeouts
    }
}
