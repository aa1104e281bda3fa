/// An SRTP protection profile negotiated through the DTLS `use_srtp` extension.
///
/// RFC 5764 §4.1.2 (AES_CM profiles) and RFC 7714 §14.2 (AEAD profiles). The order of a
/// `[SRTPProfile]` given to a DTLS engine is its preference order.
public enum SRTPProfile: Sendable, Hashable, CaseIterable {
    /// `SRTP_AES128_CM_HMAC_SHA1_80` (0x0001): AES-128 counter mode, 80-bit HMAC-SHA1 tag.
    case aes128CMSHA1_80
    /// `SRTP_AEAD_AES_128_GCM` (0x0007): AES-128 GCM with a 16-byte tag.
    case aeadAES128GCM
    /// `SRTP_AEAD_AES_256_GCM` (0x0008): AES-256 GCM with a 16-byte tag.
    case aeadAES256GCM

    /// The profile identifier carried in the `use_srtp` extension (RFC 5764 §4.1.2).
    public var identifier: UInt16 {
        switch self {
        case .aes128CMSHA1_80: 0x0001
        case .aeadAES128GCM: 0x0007
        case .aeadAES256GCM: 0x0008
        }
    }

    /// Looks a profile up by its `use_srtp` identifier.
    public init?(identifier: UInt16) {
        guard let match = Self.allCases.first(where: { $0.identifier == identifier }) else { return nil }
        self = match
    }

    /// The crypto-suite name in an SDES `a=crypto` line (RFC 4568 §6.2, RFC 7714 §12).
    public var sdesSuite: String {
        switch self {
        case .aes128CMSHA1_80: "AES_CM_128_HMAC_SHA1_80"
        case .aeadAES128GCM: "AEAD_AES_128_GCM"
        case .aeadAES256GCM: "AEAD_AES_256_GCM"
        }
    }

    /// Looks a profile up by its SDES crypto-suite name.
    public init?(sdesSuite: some StringProtocol) {
        guard let match = Self.allCases.first(where: { $0.sdesSuite == sdesSuite }) else { return nil }
        self = match
    }

    /// The name OpenSSL uses in `SSL_set_tlsext_use_srtp`.
    public var openSSLName: String {
        switch self {
        case .aes128CMSHA1_80: "SRTP_AES128_CM_SHA1_80"
        case .aeadAES128GCM: "SRTP_AEAD_AES_128_GCM"
        case .aeadAES256GCM: "SRTP_AEAD_AES_256_GCM"
        }
    }

    /// Master key length in bytes.
    public var keyLength: Int {
        switch self {
        case .aes128CMSHA1_80, .aeadAES128GCM: 16
        case .aeadAES256GCM: 32
        }
    }

    /// Master salt length in bytes: 112 bits for AES-CM (RFC 3711 §8.2), 96 bits for GCM (RFC 7714 §8.1).
    public var saltLength: Int {
        switch self {
        case .aes128CMSHA1_80: 14
        case .aeadAES128GCM, .aeadAES256GCM: 12
        }
    }

    /// Bytes `protectRTP` appends: the authentication tag.
    public var rtpTrailerLength: Int {
        switch self {
        case .aes128CMSHA1_80: 10
        case .aeadAES128GCM, .aeadAES256GCM: 16
        }
    }

    /// Bytes `protectRTCP` appends: the E-flag/SRTCP index word plus the tag (RFC 3711 §3.4).
    public var rtcpTrailerLength: Int { 4 + rtpTrailerLength }

    /// Keying material the DTLS exporter must produce: both sides' keys and salts (RFC 5764 §4.2).
    public var keyingMaterialLength: Int { 2 * (keyLength + saltLength) }
}
