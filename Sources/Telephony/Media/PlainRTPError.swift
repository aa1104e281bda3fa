/// Why an SDP offer or answer cannot set up a plain-RTP audio leg; the UA answers 488.
public enum PlainRTPError: Error, Hashable, Sendable {
    case noAudioSection
    case unsupportedProfile(String)
    case noCommonCodec
    case missingConnectionAddress
}
