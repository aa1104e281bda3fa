/// What the SIP edge asks the platform: who owns a number, and a device user's digest HA1.
/// Called on the edge's loop; implementations read the store and return quickly.
public protocol TelephonyDirectory: Sendable {
    /// The number's routing, nil when no account owns it.
    func route(number: String) -> NumberRoute?
    /// `MD5(username:realm:password)` for a device user, nil when the user has no SIP password.
    func deviceHA1(realm: String, username: String) -> String?
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
