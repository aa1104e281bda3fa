/// A WebSocket protocol violation and the close code to fail the connection with
/// (RFC 6455 section 7.1.7).
public struct WebSocketError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        case reservedBitsSet(UInt8)
        case reservedOpcode(UInt8)
        case fragmentedControlFrame
        case controlFrameTooLong(Int)
        case unmaskedClientFrame
        case maskedServerFrame
        case nonMinimalLength
        case lengthHighBitSet
        case frameTooLarge(length: UInt64, limit: Int)
        case messageTooLarge(limit: Int)
        case continuationWithoutStart
        case dataFrameInsideFragmentedMessage
        case invalidUTF8
        case closePayloadTooShort
        case invalidCloseCode(UInt16)
        case invalidCloseReason
    }

    public var kind: Kind

    public init(_ kind: Kind) { self.kind = kind }

    /// 1009 for size limits, 1007 for bad UTF-8, 1002 for everything else.
    public var closeCode: WebSocketCloseCode {
        switch kind {
        case .frameTooLarge, .messageTooLarge: .messageTooBig
        case .invalidUTF8, .invalidCloseReason: .invalidPayloadData
        default: .protocolError
        }
    }

    public var description: String { "WebSocket \(closeCode): \(kind)" }
}
