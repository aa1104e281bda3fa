/// What `/metrics` reads about a SIP endpoint, copied after each batch of work on its loop.
public struct SIPEndpointSnapshot: Hashable, Sendable {
    public var statistics = SIPStatistics()
    public var trunks: [TrunkStatus] = []
    public var transactions = 0
    public var calls = 0
    public var bindings = 0
    public var connections = 0

    public init(statistics: SIPStatistics = SIPStatistics(), trunks: [TrunkStatus] = [], transactions: Int = 0, calls: Int = 0,
                bindings: Int = 0, connections: Int = 0) {
        self.statistics = statistics
        self.trunks = trunks
        self.transactions = transactions
        self.calls = calls
        self.bindings = bindings
        self.connections = connections
    }
}
