/// Configuration of the SIP user agent.
public struct UserAgentConfig: Hashable, Sendable {
    /// The address put in Via and Contact (the listening address).
    public var host: String
    public var port: UInt16
    public var trunks: [TrunkConfig]
    /// Hosts of registered devices, also allowed to send requests.
    public var devices: [String]
    public var timers: SIPTimers
    /// Server transactions one source may have open at once; more are answered 503.
    public var maxPendingPerSource: Int
    /// The same cap for a trunk's sources: a carrier legitimately has many calls setting up at once.
    public var maxPendingPerTrunk: Int
    public var userAgent: String

    public init(host: String = "0.0.0.0", port: UInt16 = 5060, trunks: [TrunkConfig] = [], devices: [String] = [],
                timers: SIPTimers = .default, maxPendingPerSource: Int = 64, maxPendingPerTrunk: Int = 2048,
                userAgent: String = "Switchboard") {
        self.host = host
        self.port = port
        self.trunks = trunks
        self.devices = devices
        self.timers = timers
        self.maxPendingPerSource = maxPendingPerSource
        self.maxPendingPerTrunk = maxPendingPerTrunk
        self.userAgent = userAgent
    }

    func isAllowed(_ host: String) -> Bool {
        devices.contains(host) || trunks.contains { $0.accepts(host) }
    }
}
