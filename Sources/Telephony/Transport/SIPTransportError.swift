/// Why a SIP transport could not be opened.
public enum SIPTransportError: Error, Hashable, Sendable {
    case badAddress(String)
    case system(String, Int32)
}
