/// Why a DTLS association failed.
public enum DTLSFailure: Error, Sendable, Hashable {
    /// The peer's certificate does not hash to the fingerprint its SDP announced (RFC 8122 §5).
    case fingerprintMismatch
    /// The handshake finished without a peer certificate to check.
    case missingRemoteCertificate
    /// The peer offered no SRTP profile we accept (RFC 5764 §4.1.3).
    case noSRTPProfile
    /// The DTLS-SRTP exporter did not produce keying material (RFC 5764 §4.2).
    case keyExportFailed
    /// The peer sent a fatal alert (RFC 5246 §7.2); `description` is the alert code.
    case alertReceived(description: UInt8)
    /// A flight was retransmitted the maximum number of times without an answer.
    case retransmissionLimitReached
    /// OpenSSL rejected the handshake; `detail` is its error string.
    case handshakeFailed(detail: String)
}

/// Connection state of a `DTLSEngine`.
public enum DTLSState: Sendable, Hashable {
    /// Created; `start` not called and (server) nothing received yet.
    case new
    /// Handshake in progress.
    case connecting
    /// Handshake done, fingerprint verified, SRTP keys available.
    case connected
    /// Terminal: the association failed.
    case failed(DTLSFailure)
    /// Terminal: closed by `close()` or by the peer's close_notify.
    case closed
}

/// What one input to a `DTLSEngine` produced.
public struct DTLSOutput: Sendable {
    /// Datagrams to send to the peer, in order; each at most the engine's MTU.
    public var datagrams: [[UInt8]]
    /// The new state, if this input changed it.
    public var stateChange: DTLSState?
    /// Decrypted application data records (SCTP packets for data channels, RFC 8261).
    public var applicationData: [[UInt8]]

    public init(datagrams: [[UInt8]] = [], stateChange: DTLSState? = nil, applicationData: [[UInt8]] = []) {
        self.datagrams = datagrams
        self.stateChange = stateChange
        self.applicationData = applicationData
    }
}

/// Why `DTLSEngine` could not be created.
public enum DTLSSetupError: Error, Sendable, Hashable {
    /// The expected fingerprint names a hash function we do not support.
    case unsupportedFingerprintAlgorithm(String)
    /// The expected fingerprint is not colon-separated hex pairs.
    case malformedFingerprint(String)
    /// The profile list was empty.
    case noSRTPProfiles
    /// An OpenSSL setup call failed.
    case openSSL(operation: String, detail: String)
}
