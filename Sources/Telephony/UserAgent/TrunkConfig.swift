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
    /// `UDP` or `TCP`.
    public var transport: String
    public var credentials: Credentials?
    /// Source hosts accepted as this trunk besides `host` (carriers signal from several addresses).
    public var allowedSources: [String]

    public init(name: String, host: String, port: UInt16 = 5060, transport: String = "UDP", credentials: Credentials? = nil,
                allowedSources: [String] = []) {
        self.name = name
        self.host = host
        self.port = port
        self.transport = transport
        self.credentials = credentials
        self.allowedSources = allowedSources
    }
}
