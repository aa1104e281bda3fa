/// Where a message came from or goes to: a transport address (numeric host, no name resolution).
public struct SIPPeer: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    public init(host: String, port: UInt16) {
        self.host = host
        self.port = port
    }
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
