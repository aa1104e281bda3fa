/// Why an SDP offer or answer cannot set up a plain-RTP audio leg; the UA answers 488.
public enum PlainRTPError: Error, Hashable, Sendable {
    case noAudioSection
    case unsupportedProfile(String)
    case noCommonCodec
    case missingConnectionAddress
    /// RTP/SAVP without an `a=crypto` line we can use (suite, key length, MKI, parameters).
    case noUsableCrypto
    /// Plain RTP where this side requires SRTP.
    case encryptionRequired
}
