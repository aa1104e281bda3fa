import Wire

/// What this side puts in a plain-RTP audio offer or answer.
public struct AudioSessionConfig: Hashable, Sendable {
    /// The IPv4 or IPv6 address RTP is received on.
    public var address: String
    public var port: UInt16
    /// In preference order; telephone-event is added to whatever voice codec is chosen.
    public var codecs: [AudioCodec]
    public var ptime: Int
    /// Our direction: sendonly puts the peer on hold, inactive stops media both ways.
    public var direction: SDPDirection

    public init(address: String, port: UInt16, codecs: [AudioCodec] = [.pcmu, .pcma, .opus, .telephoneEvent],
                ptime: Int = 20, direction: SDPDirection = .sendrecv) {
        self.address = address
        self.port = port
        self.codecs = codecs
        self.ptime = ptime
        self.direction = direction
    }
}
