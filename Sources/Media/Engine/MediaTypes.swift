/// Errors of the media control API (never raised on the packet path, which drops and counts).
public enum MediaError: Error, Sendable, Hashable, CustomStringConvertible {
    case notFound(String)
    case invalid(String)
    case unsupported(String)
    case socket(String)

    public var description: String {
        switch self {
        case .notFound(let s): "not found: \(s)"
        case .invalid(let s): "invalid: \(s)"
        case .unsupported(let s): "unsupported: \(s)"
        case .socket(let s): "socket: \(s)"
        }
    }
}

/// A certificate fingerprint as in `a=fingerprint` (RFC 8122 §5).
public struct DTLSFingerprintValue: Sendable, Hashable, Codable {
    public var algorithm: String
    public var value: String
    public init(algorithm: String, value: String) {
        self.algorithm = algorithm
        self.value = value
    }
}

/// Our side's DTLS role (RFC 5763 §5: `a=setup:active` is the client).
public enum DTLSRole: String, Sendable, Hashable, Codable {
    case client
    case server
}

/// The remote DTLS parameters plus the role we take.
public struct DTLSParameters: Sendable, Hashable {
    public var role: DTLSRole
    public var fingerprint: DTLSFingerprintValue
    public init(role: DTLSRole, fingerprint: DTLSFingerprintValue) {
        self.role = role
        self.fingerprint = fingerprint
    }
}

/// What a new transport tells the client: ICE credentials, candidates and our fingerprint.
public struct TransportInfo: Sendable, Hashable {
    public var id: TransportID
    public var router: RouterID
    public var iceParameters: ICEParameters
    public var candidates: [ICECandidate]
    public var fingerprint: DTLSFingerprintValue
}

/// Counters of one worker.
public struct WorkerStats: Sendable, Hashable, Codable {
    public var index: Int
    public var port: UInt16
    public var datagramsIn: UInt64
    public var datagramsOut: UInt64
    public var bytesOut: UInt64
    public var sendDrops: UInt64
    public var unroutable: UInt64
    public var routers: Int
    public var transports: Int
    public var producers: Int
    public var consumers: Int
    /// SFU-added latency (receive batch to send), microseconds, since the worker started.
    public var forwardingMicrosecondsP50: Double
    public var forwardingMicrosecondsP99: Double
    /// Whether runs of datagrams to one subscriber leave as one segmented send (UDP GSO; off once the
    /// kernel refused one), the datagrams that rode in such a send after its first, and the refusals.
    public var segmentation: Bool
    public var segmentsCoalesced: UInt64
    public var segmentationRefusals: UInt64
}
