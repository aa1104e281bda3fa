/// A close status code (RFC 6455 section 7.4).
public struct WebSocketCloseCode: RawRepresentable, Hashable, Sendable, ExpressibleByIntegerLiteral,
    CustomStringConvertible
{
    public let rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public init(integerLiteral value: UInt16) { self.rawValue = value }

    public var description: String { String(rawValue) }

    public static let normalClosure: WebSocketCloseCode = 1000
    public static let goingAway: WebSocketCloseCode = 1001
    public static let protocolError: WebSocketCloseCode = 1002
    public static let unsupportedData: WebSocketCloseCode = 1003
    /// Never sent: means "close frame had no code".
    public static let noStatusReceived: WebSocketCloseCode = 1005
    /// Never sent: means "connection dropped without a close frame".
    public static let abnormalClosure: WebSocketCloseCode = 1006
    public static let invalidPayloadData: WebSocketCloseCode = 1007
    public static let policyViolation: WebSocketCloseCode = 1008
    public static let messageTooBig: WebSocketCloseCode = 1009
    public static let mandatoryExtension: WebSocketCloseCode = 1010
    public static let internalError: WebSocketCloseCode = 1011
    public static let serviceRestart: WebSocketCloseCode = 1012
    public static let tryAgainLater: WebSocketCloseCode = 1013
    public static let badGateway: WebSocketCloseCode = 1014

    /// Whether a peer may put this code in a close frame.
    ///
    /// 1000-1003 and 1007-1011 from RFC 6455, 1012-1014 from the IANA registry, and
    /// 3000-4999 for libraries and applications. 1004-1006 and 1015 are reserved for
    /// local use, below 1000 and 1016-2999 are unassigned.
    public var isValidOnWire: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }
}
