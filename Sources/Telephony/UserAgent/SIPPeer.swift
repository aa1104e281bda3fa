/// Where a message came from or goes to: a transport address (numeric host, no name resolution)
/// and the transport that carries it. A TCP peer is one connection, so responses go back on it.
public struct SIPPeer: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: UInt16
    public var transport: SIPTransportKind
    /// The name `host` was resolved from, when it was: a TLS connection to the peer checks that its
    /// certificate names it (else `host`). Not part of the peer's identity: messages from the address
    /// belong to the same peer.
    public var serverName: String?
    public init(host: String, port: UInt16, transport: SIPTransportKind = .udp, serverName: String? = nil) {
        self.host = host
        self.port = port
        self.transport = transport
        self.serverName = serverName
    }
    public static func == (a: SIPPeer, b: SIPPeer) -> Bool { a.host == b.host && a.port == b.port && a.transport == b.transport }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(transport)
    }
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
