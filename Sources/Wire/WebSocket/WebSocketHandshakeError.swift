/// Why an opening handshake was refused, and the HTTP answer to send.
public struct WebSocketHandshakeError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        case notGET
        case notHTTP11
        case missingUpgrade
        case missingConnectionUpgrade
        case missingVersion
        case unsupportedVersion
        case invalidKey
        case notSwitchingProtocols
        case invalidAccept
        case unexpectedProtocol
        case unexpectedExtension
    }

    public var kind: Kind
    public var status: Int
    public var detail: String
    /// Fields the error response must carry (Sec-WebSocket-Version for 426).
    public var headers: HTTPHeaders

    public init(_ kind: Kind, _ detail: String, status: Int = 400) {
        self.kind = kind
        self.status = status
        self.detail = detail
        self.headers = HTTPHeaders()
    }

    /// The response head a server sends to refuse the upgrade.
    public var responseHead: HTTPResponseHead {
        HTTPResponseHead(status: status, headers: headers)
    }

    public var description: String { "\(status): \(detail)" }
}
