/// Configuration of the SIP user agent.
public struct UserAgentConfig: Hashable, Sendable {
    /// The address put in Via and Contact (the listening address).
    public var host: String
    public var port: UInt16
    /// The SIP-over-TLS port put in Via and Contact of messages sent over TLS; nil when TLS is off.
    public var tlsPort: UInt16?
    public var trunks: [TrunkConfig]
    /// Hosts of registered devices, also allowed to send requests.
    public var devices: [String]
    public var timers: SIPTimers
    /// Server transactions one source may have open at once; more are answered 503.
    public var maxPendingPerSource: Int
    /// The same cap for a trunk's sources: a carrier legitimately has many calls setting up at once.
    public var maxPendingPerTrunk: Int
    /// Overload shedding: new INVITEs are answered `503` with `Retry-After` while this many calls are up
    /// (0: no limit)…
    public var maxCalls: Int
    /// …or while this many INVITEs from all sources are still unanswered (the answers falling behind:
    /// past this, the callers' retransmissions would add to the work faster than it is done).
    public var maxPendingInvites: Int
    /// The `Retry-After` of a shed INVITE, in seconds.
    public var retryAfterSeconds: Int
    public var userAgent: String

    public init(host: String = "0.0.0.0", port: UInt16 = 5060, trunks: [TrunkConfig] = [], devices: [String] = [],
                timers: SIPTimers = .default, maxPendingPerSource: Int = 64, maxPendingPerTrunk: Int = 2048,
                maxCalls: Int = 0, maxPendingInvites: Int = 1000, retryAfterSeconds: Int = 5, userAgent: String = "Switchboard",
                tlsPort: UInt16? = nil) {
        self.host = host
        self.port = port
        self.tlsPort = tlsPort
        self.trunks = trunks
        self.devices = devices
        self.timers = timers
        self.maxPendingPerSource = maxPendingPerSource
        self.maxPendingPerTrunk = maxPendingPerTrunk
        self.maxCalls = maxCalls
        self.maxPendingInvites = maxPendingInvites
        self.retryAfterSeconds = retryAfterSeconds
        self.userAgent = userAgent
    }

    /// The port this user agent receives `transport` on: the TLS port for TLS, the SIP port otherwise.
    public func port(for transport: SIPTransportKind) -> UInt16 {
        transport == .tls ? tlsPort ?? port : port
    }

    func isAllowed(_ host: String) -> Bool {
        devices.contains(host) || trunks.contains { $0.accepts(host) }
    }
}
