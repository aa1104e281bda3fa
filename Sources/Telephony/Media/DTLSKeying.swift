import Crypto
import Wire

/// SRTP for a plain RTP leg keyed by DTLS handshakes on the leg's own ports (DTLS-SRTP, RFC 5763, RFC 5764):
/// the SDP carries each side's certificate fingerprint (`a=fingerprint`) and who starts the handshake
/// (`a=setup`), never a key. When RTP and RTCP have ports of their own, each runs a handshake and is keyed by
/// it (RFC 5764 §4.1); multiplexed (`rtcpMux`), one handshake keys both. A peer's certificate counts only if it
/// hashes to the fingerprint its SDP gave.
public struct DTLSKeying: Hashable, Sendable {
    /// Our part in the handshakes.
    public var role: DTLSEngine.Role
    /// The peer's certificate fingerprint, as its SDP gave it.
    public var remote: SDPFingerprint

    public init(role: DTLSEngine.Role, remote: SDPFingerprint) {
        self.role = role
        self.remote = remote
    }

    /// This server's certificate on SIP calls (self-signed, as a phone's is: the SDP vouches for it), made
    /// once, when first needed; nil when it could not be made, and then DTLS-SRTP is neither offered nor accepted.
    public static let certificate: DTLSCertificate? = try? DTLSCertificate(commonName: "switchboard")

    /// A handshake for one port of the leg: our certificate, the peer's fingerprint to check its own against.
    func engine() throws(DTLSSetupError) -> DTLSEngine {
        guard let certificate = Self.certificate else { throw .openSSL(operation: "DTLSCertificate", detail: "no certificate") }
        return try DTLSEngine(role: role, certificate: certificate, expectedRemoteFingerprint: (remote.algorithm, remote.value))
    }

    /// Our fingerprint, as our SDP gives it.
    static var localFingerprint: SDPFingerprint? { certificate.map { SDPFingerprint(algorithm: "sha-256", value: $0.fingerprintSHA256) } }

    /// The setup an answer gives for the offer's (RFC 5763 §5): active — we start the handshakes — unless the
    /// offerer will start them itself (`active`); nil for `holdconn`.
    static func answering(_ offered: SDPSetupRole?) -> SDPSetupRole? {
        switch offered {
        case .active: .passive
        case .passive, .actpass, nil: .active
        case .holdconn: nil
        }
    }

    /// Our part for the setup we put in our SDP, once the other side's is known.
    static func role(ours: SDPSetupRole) -> DTLSEngine.Role { ours == .active ? .client : .server }

    /// The peer's fingerprint when this side can check it (`DTLSEngine.canCheck`): the media section's, else
    /// the session's.
    static func usableFingerprint(of sdp: SessionDescription, _ media: MediaDescription) -> SDPFingerprint? {
        guard let f = media.fingerprint ?? sdp.fingerprint, DTLSEngine.canCheck(fingerprint: (f.algorithm, f.value)) else { return nil }
        return f
    }
}
