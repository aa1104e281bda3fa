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

    /// What went wrong, in words a peer can read in a close frame (at most 123 bytes, RFC 6455 §5.5).
    public var reason: String {
        switch kind {
        case .reservedBitsSet: "reserved bits set without an extension"
        case .reservedOpcode(let op): "reserved opcode \(op)"
        case .fragmentedControlFrame: "fragmented control frame"
        case .controlFrameTooLong(let n): "control frame of \(n) bytes (at most 125)"
        case .unmaskedClientFrame: "client frames must be masked"
        case .maskedServerFrame: "server frames must not be masked"
        case .nonMinimalLength: "frame length not minimally encoded"
        case .lengthHighBitSet: "frame length has its high bit set"
        case .frameTooLarge(_, let limit), .messageTooLarge(let limit): "message larger than \(limit) bytes"
        case .continuationWithoutStart: "continuation frame without a message"
        case .dataFrameInsideFragmentedMessage: "new message inside a fragmented message"
        case .invalidUTF8: "text is not valid UTF-8"
        case .closePayloadTooShort: "close payload of one byte"
        case .invalidCloseCode(let c): "invalid close code \(c)"
        case .invalidCloseReason: "close reason is not valid UTF-8"
        }
    }

    public var description: String { "WebSocket \(closeCode): \(reason)" }
}
