import Crypto
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
    /// `.srtp`: offer RTP/SAVP with SDES keys and refuse plain offers. Either way an offer with usable
    /// keys is answered with SRTP.
    public var encryption: MediaEncryption
    /// Our SRTP master key and salt (30 random bytes; a suite with a shorter salt takes a prefix).
    /// Kept with the config so the answer sent and the leg's transform use the same key.
    public var keySalt: [UInt8]

    public init(address: String, port: UInt16, codecs: [AudioCodec] = [.pcmu, .pcma, .opus, .telephoneEvent],
                ptime: Int = 20, direction: SDPDirection = .sendrecv, encryption: MediaEncryption = .none,
                keySalt: [UInt8] = SecureRandom.bytes(30)) {
        self.address = address
        self.port = port
        self.codecs = codecs
        self.ptime = ptime
        self.direction = direction
        self.encryption = encryption
        self.keySalt = keySalt
    }

    /// Our key and salt for `profile`.
    func keySalt(for profile: SRTPProfile) -> [UInt8] { Array(keySalt.prefix(SDESKeying.keySaltLength(profile))) }
}
