/// Why an SRTP or SRTCP packet could not be protected or unprotected.
///
/// The packet path drops and counts these; none of them is fatal to the session.
public enum SRTPError: Error, Sendable, Hashable {
    /// The packet index was already seen or is older than the replay window (RFC 3711 §3.3.2).
    case replay
    /// The authentication tag did not verify (RFC 3711 §3.4; RFC 7714 §9.3 for GCM).
    case authFailure
    /// The buffer cannot hold the trailer `protect` must append.
    case bufferTooSmall(needed: Int, capacity: Int)
    /// Key or salt length does not match the profile.
    case badKeyLength(expected: Int, actual: Int)
    /// Any other libsrtp status code (`srtp_err_status_t`).
    case other(code: UInt32)
}
