/// Why an RTP leg could not be set up.
public enum RTPLegError: Error, Hashable, Sendable {
    case noFreePort
    case badAddress(String)
    case codec(String)
    case srtp(String)
    case system(String, Int32)
}
