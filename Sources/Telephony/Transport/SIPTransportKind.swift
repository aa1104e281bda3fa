/// A SIP transport as named in Via and the `transport=` URI parameter (RFC 3261 §18).
public enum SIPTransportKind: String, Hashable, Sendable, CaseIterable {
    case udp = "UDP"
    case tcp = "TCP"

    /// Stream transports deliver reliably: no retransmission timers (RFC 3261 §17.1.1.2).
    public var isReliable: Bool { self != .udp }

    /// Parses `udp`, `UDP`, `tcp`, `TCP`.
    public init?(name: String) {
        self.init(rawValue: name.uppercased())
    }
}
