/// A SIP transport as named in Via and the `transport=` URI parameter (RFC 3261 §18, §26.2).
public enum SIPTransportKind: String, Hashable, Sendable, CaseIterable {
    case udp = "UDP"
    case tcp = "TCP"
    /// TCP with TLS (RFC 3261 §26.2.1): stream framing as TCP, on its own port (5061 by default).
    case tls = "TLS"

    /// Stream transports deliver reliably: no retransmission timers (RFC 3261 §17.1.1.2).
    public var isReliable: Bool { self != .udp }

    /// Parses `udp`, `UDP`, `tcp`, `TCP`, `tls`, `TLS`.
    public init?(name: String) {
        self.init(rawValue: name.uppercased())
    }
}
