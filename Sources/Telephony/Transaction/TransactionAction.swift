import Wire

/// What a transaction asks its owner to do; the owner sends, delivers and schedules.
public enum TransactionAction: Hashable, Sendable {
    /// Send this message to the transaction's peer.
    case send(SIPMessage)
    /// Pass a response (client) or request (server) up to the transaction user.
    case deliver(SIPMessage)
    /// No final response (client) or no ACK (server) in time: tell the transaction user.
    case timeout
    /// The transaction is over; forget it.
    case terminated
}
