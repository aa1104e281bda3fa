/// A SIP request method (RFC 3261 §7.1); methods are case-sensitive tokens.
public struct SIPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let invite = SIPMethod("INVITE")
    public static let ack = SIPMethod("ACK")
    public static let bye = SIPMethod("BYE")
    public static let cancel = SIPMethod("CANCEL")
    public static let options = SIPMethod("OPTIONS")
    public static let register = SIPMethod("REGISTER")
    /// RFC 3262.
    public static let prack = SIPMethod("PRACK")
    /// RFC 3311.
    public static let update = SIPMethod("UPDATE")
    public static let info = SIPMethod("INFO")
    public static let message = SIPMethod("MESSAGE")
    public static let refer = SIPMethod("REFER")
    public static let notify = SIPMethod("NOTIFY")
    public static let subscribe = SIPMethod("SUBSCRIBE")

    public var description: String { rawValue }
}
