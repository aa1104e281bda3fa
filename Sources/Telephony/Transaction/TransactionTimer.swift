/// The transaction timers of RFC 3261 §17 (table 4) and RFC 6026 (L, M), as data.
public enum TransactionTimer: String, Hashable, Sendable, CaseIterable {
    /// INVITE request retransmission (client, unreliable transports).
    case a = "A"
    /// INVITE transaction timeout (client).
    case b = "B"
    /// Wait for response retransmissions after a non-2xx final response (client INVITE).
    case d = "D"
    /// Non-INVITE request retransmission (client, unreliable transports).
    case e = "E"
    /// Non-INVITE transaction timeout (client).
    case f = "F"
    /// Final response retransmission (server INVITE, unreliable transports).
    case g = "G"
    /// Wait for ACK (server INVITE).
    case h = "H"
    /// Wait for ACK retransmissions (server INVITE).
    case i = "I"
    /// Wait for request retransmissions (server non-INVITE).
    case j = "J"
    /// Wait for response retransmissions (client non-INVITE).
    case k = "K"
    /// Absorb INVITE retransmissions after a 2xx (server, RFC 6026).
    case l = "L"
    /// Absorb 2xx retransmissions (client INVITE, RFC 6026).
    case m = "M"
    /// 2xx retransmission until the ACK arrives (UAS core, RFC 3261 §13.3.1.4).
    case okRetransmit = "2xx"
}
