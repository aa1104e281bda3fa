import Runtime
import Wire

/// One registered contact of an address of record (RFC 3261 §10.3).
public struct Binding: Hashable, Sendable {
    /// `user@domain` of the address of record.
    public var aor: String
    public var contact: SIPURI
    /// Where the REGISTER came from: calls to the contact go there (the device may be behind NAT).
    public var source: SIPPeer
    public var expires: Instant
    public var callID: String
    public var sequence: UInt32
}
