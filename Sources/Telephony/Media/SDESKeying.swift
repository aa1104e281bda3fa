import Crypto
import SRTP
import Wire

/// SRTP for a plain RTP leg keyed in the SDP itself (SDES, RFC 4568): each side sends its own
/// master key and salt in an `a=crypto` line and protects what it sends with it.
///
/// The keys travel in the signalling, so they are only as private as the SIP hop: SDES is meant to be
/// used with SIP over TLS, which is why a trunk or a dial asking for SRTP must use `transport=tls`.
public struct SDESKeying: Hashable, Sendable {
    public var profile: SRTPProfile
    /// Our master key then salt: what we protect with.
    public var local: [UInt8]
    /// The peer's master key then salt: what we unprotect with.
    public var remote: [UInt8]
    /// The MKI the peer's packets carry with its key, if its line gave one (ours carry none).
    public var remoteMKI: [UInt8]

    public init(profile: SRTPProfile, local: [UInt8], remote: [UInt8], remoteMKI: [UInt8] = []) {
        self.profile = profile
        self.local = local
        self.remote = remote
        self.remoteMKI = remoteMKI
    }

    /// Keying with the peer's `line`: its key and salt, and its MKI.
    init(profile: SRTPProfile, local: [UInt8], remote line: SDPCrypto) {
        self.init(profile: profile, local: local, remote: line.keySalt, remoteMKI: line.mkiBytes ?? [])
    }

    /// The suites we offer, in preference order, and accept in an offer.
    public static let suites: [SRTPProfile] = [.aes128CMSHA1_80, .aeadAES128GCM]

    /// Bytes of master key and salt `profile` needs.
    static func keySaltLength(_ profile: SRTPProfile) -> Int { profile.keyLength + profile.saltLength }

    /// The first of the peer's lines this side can use: a suite it supports, a key of the right
    /// length, an MKI (if any) that can be read, and no session parameters that change the transform
    /// (`UNENCRYPTED_SRTP`, `KDR`, …; a replay window size is fine).
    static func usable(_ lines: [SDPCrypto]) -> (SDPCrypto, SRTPProfile)? {
        for line in lines {
            guard let profile = SRTPProfile(sdesSuite: line.suite), suites.contains(profile),
                  line.keySalt.count == keySaltLength(profile), line.mki == nil || line.mkiBytes != nil,
                  line.sessionParameters.allSatisfy({ $0.hasPrefix("WSH=") }) else { continue }
            return (line, profile)
        }
        return nil
    }

    /// The line of a re-offer a call keyed with `profile` goes on with: the first usable one of that suite (the
    /// leg takes its key, `PlainRTPNegotiator.renegotiated`; our answer takes its tag, `UserAgentCore.reanswer`).
    static func reoffered(_ lines: [SDPCrypto], profile: SRTPProfile) -> SDPCrypto? {
        usable(lines.filter { SRTPProfile(sdesSuite: $0.suite) == profile })?.0
    }

    /// The inbound and outbound transforms.
    func transforms() throws(RTPLegError) -> (inbound: SRTPTransform, outbound: SRTPTransform) {
        let k = profile.keyLength
        do {
            return (try SRTPTransform(profile: profile, masterKey: Array(remote[..<k]), masterSalt: Array(remote[k...]), direction: .inbound,
                                      mki: remoteMKI),
                    try SRTPTransform(profile: profile, masterKey: Array(local[..<k]), masterSalt: Array(local[k...]), direction: .outbound))
        } catch {
            throw .srtp("\(error)")
        }
    }
}

/// Whether a leg's media must be SRTP. Whatever the setting, an offer that carries usable keys is
/// answered with SRTP.
public enum MediaEncryption: String, Hashable, Sendable, CaseIterable {
    /// Plain RTP offered.
    case none
    /// Best effort: RTP/AVP offered with SDES keys; SRTP when the answer keys it too, plain RTP when the
    /// answer has no keys (a peer that does not do SDES ignores the lines). For calls whose signalling is
    /// TLS: registered devices reached over TLS, `sips:` and `;transport=tls` addresses.
    case optional
    /// SRTP (RTP/SAVP with SDES keys) offered, and required of the peer's answers and offers.
    case srtp
    /// DTLS-SRTP (UDP/TLS/RTP/SAVP, keyed by DTLS on the media ports) offered and required of the peer's
    /// answers; offers must be encrypted (SDES or DTLS). The keys never travel in the signalling, so any
    /// transport will do; SIP over TLS still keeps the fingerprints from being swapped on the way.
    case dtlsSrtp = "dtls-srtp"
}
