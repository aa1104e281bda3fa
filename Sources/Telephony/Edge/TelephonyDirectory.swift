/// What the SIP edge asks the platform: who owns a number, and a device user's digest HA1.
/// Called on the edge's loop; implementations read the store and return quickly.
public protocol TelephonyDirectory: Sendable {
    /// The number's routing, nil when no account owns it.
    func route(number: String) -> NumberRoute?
    /// `MD5(username:realm:password)` for a device user, nil when the user has no SIP password.
    func deviceHA1(realm: String, username: String) -> String?
    /// An address of record's registrations, all of them as they are now (none: unregistered); kept so
    /// they survive a restart.
    func saveBindings(aor: String, _ bindings: [SavedBinding])
    /// The registrations kept, for the registrar when the edge starts.
    func savedBindings() -> [SavedBinding]
}

extension TelephonyDirectory {
    public func saveBindings(aor: String, _ bindings: [SavedBinding]) {}
    public func savedBindings() -> [SavedBinding] { [] }
}

/// A device registration as it is stored: its expiry in wall-clock milliseconds since 1970.
public struct SavedBinding: Hashable, Sendable {
    public var aor: String
    public var contact: String
    public var sourceHost: String
    public var sourcePort: UInt16
    public var transport: String
    public var expiresAtMillis: Int64
    public var callID: String
    public var sequence: UInt32

    public init(aor: String, contact: String, sourceHost: String, sourcePort: UInt16, transport: String, expiresAtMillis: Int64,
                callID: String, sequence: UInt32) {
        self.aor = aor
        self.contact = contact
        self.sourceHost = sourceHost
        self.sourcePort = sourcePort
        self.transport = transport
        self.expiresAtMillis = expiresAtMillis
        self.callID = callID
        self.sequence = sequence
    }
}

/// Where calls to an owned number go.
public struct NumberRoute: Hashable, Sendable {
    public var msisdn: String
    /// The voice application answering the number, nil when none is linked.
    public var applicationID: String?
    /// The trunk the number lives on, by name.
    public var trunk: String?

    public init(msisdn: String, applicationID: String?, trunk: String?) {
        self.msisdn = msisdn
        self.applicationID = applicationID
        self.trunk = trunk
    }
}
