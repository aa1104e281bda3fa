import Wire

/// Why a message cannot create or continue a dialog.
public enum DialogError: Error, Hashable, Sendable {
    case malformed(SIPParseError)
    case missingTag
    case missingContact
    /// A request whose CSeq is not above the last one (RFC 3261 §12.2.2): answer 500.
    case sequenceOutOfOrder(received: UInt32, last: UInt32)
}
