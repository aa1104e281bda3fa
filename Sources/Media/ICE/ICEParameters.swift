import Crypto

/// ICE credentials of one side of a transport (RFC 8445 §5.3, RFC 8839 §5.4).
public struct ICEParameters: Sendable, Hashable {
    /// `a=ice-ufrag`: 4-256 ICE characters.
    public var usernameFragment: String
    /// `a=ice-pwd`: at least 22 ICE characters (128 bits of randomness).
    public var password: String
    /// True for an ICE-lite agent (`a=ice-lite`), which never sends checks.
    public var iceLite: Bool

    public init(usernameFragment: String, password: String, iceLite: Bool = false) {
        self.usernameFragment = usernameFragment
        self.password = password
        self.iceLite = iceLite
    }

    /// Fresh random credentials: 16 and 32 characters from the ICE alphabet.
    public static func random(iceLite: Bool, source: some RandomSource = SystemRandom()) -> ICEParameters {
        ICEParameters(usernameFragment: token(16, source), password: token(32, source), iceLite: iceLite)
    }

    static let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/")

    static func token(_ length: Int, _ source: some RandomSource) -> String {
        String(source.bytes(length).map { alphabet[Int($0 & 63)] })
    }
}

/// A host candidate we announce (RFC 8839 §5.1): one per worker port.
public struct ICECandidate: Sendable, Hashable {
    public var foundation: String
    public var priority: UInt32
    public var ip: String
    public var port: UInt16
    public var transport: String

    public init(foundation: String = "1", priority: UInt32 = 2_130_706_431, ip: String, port: UInt16, transport: String = "udp") {
        self.foundation = foundation
        self.priority = priority
        self.ip = ip
        self.port = port
        self.transport = transport
    }

    /// The value of an `a=candidate:` line.
    public var sdpValue: String {
        "\(foundation) 1 \(transport) \(priority) \(ip) \(port) typ host"
    }
}
