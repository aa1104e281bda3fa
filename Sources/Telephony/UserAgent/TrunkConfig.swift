/// A SIP trunk: the carrier we place calls through and accept calls from.
public struct TrunkConfig: Hashable, Sendable {
    public struct Credentials: Hashable, Sendable {
        public var username: String
        public var password: String
        public init(username: String, password: String) {
            self.username = username
            self.password = password
        }
    }

    public var name: String
    public var host: String
    public var port: UInt16
    public var transport: SIPTransportKind
    public var credentials: Credentials?
    /// Source hosts or CIDR ranges (`10.0.0.0/8`) accepted as this trunk besides `host`.
    public var allowedSources: [String]
    /// Whether the carrier wants us to REGISTER with it (with `credentials`).
    public var register: Bool
    /// Seconds between OPTIONS health checks; 0 turns them off.
    public var healthInterval: Int

    public init(name: String, host: String, port: UInt16 = 5060, transport: SIPTransportKind = .udp, credentials: Credentials? = nil,
                allowedSources: [String] = [], register: Bool = false, healthInterval: Int = 0) {
        self.name = name
        self.host = host
        self.port = port
        self.transport = transport
        self.credentials = credentials
        self.allowedSources = allowedSources
        self.register = register
        self.healthInterval = healthInterval
    }

    public var peer: SIPPeer { SIPPeer(host: host, port: port, transport: transport) }

    /// Whether a request from `source` comes from this trunk.
    public func accepts(_ source: String) -> Bool {
        source == host || allowedSources.contains { AddressRange(parsing: $0)?.contains(source) ?? ($0 == source) }
    }
}
