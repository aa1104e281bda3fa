/// An HTTP request method (RFC 9110 section 9).
///
/// Any token is a valid method on the wire, so this wraps the string instead of being a
/// closed enum; the common ones are static members so routes can say `.GET`.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    public init(stringLiteral value: String) { self.rawValue = value }

    public var description: String { rawValue }

    public static let GET = HTTPMethod("GET")
    public static let HEAD = HTTPMethod("HEAD")
    public static let POST = HTTPMethod("POST")
    public static let PUT = HTTPMethod("PUT")
    public static let PATCH = HTTPMethod("PATCH")
    public static let DELETE = HTTPMethod("DELETE")
    public static let OPTIONS = HTTPMethod("OPTIONS")
    public static let CONNECT = HTTPMethod("CONNECT")
    public static let TRACE = HTTPMethod("TRACE")
}
