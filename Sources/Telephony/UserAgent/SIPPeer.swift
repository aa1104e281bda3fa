/// Where a message came from or goes to: a transport address (numeric host, no name resolution)
/// and the transport that carries it. A TCP peer is one connection, so responses go back on it.
public struct SIPPeer: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    public var transport: SIPTransportKind
    public init(host: String, port: UInt16, transport: SIPTransportKind = .udp) {
        self.host = host
        self.port = port
        self.transport = transport
    }
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
