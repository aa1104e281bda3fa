/// Joins data frames into messages and checks what frames alone cannot
/// (RFC 6455 sections 5.4, 5.5.1, 5.6 and 8.1).
///
/// Control frames may arrive between the fragments of a message and are returned at
/// once. Text is UTF-8-checked fragment by fragment, so an invalid prefix fails (1007)
/// before the rest of the message arrives.
public struct WebSocketMessageAssembler: Sendable {
    /// Largest joined message; exceeding it is 1009.
    public var maxMessageSize: Int

    private var fragmentOpcode: WebSocketOpcode?
    private var fragments: [UInt8] = []
    private var utf8 = UTF8Validator()

    public init(maxMessageSize: Int = 1 << 20) {
        self.maxMessageSize = maxMessageSize
    }

    /// Whether a fragmented message has started and not yet finished.
    public var isInsideMessage: Bool { fragmentOpcode != nil }

    /// Feeds one frame; returns a message when one is complete.
    public mutating func push(_ frame: WebSocketFrame) throws(WebSocketError) -> WebSocketMessage? {
        switch frame.opcode {
        case .ping, .pong, .close:
            if !frame.fin { throw WebSocketError(.fragmentedControlFrame) }
            if frame.payload.count > 125 { throw WebSocketError(.controlFrameTooLong(frame.payload.count)) }
            switch frame.opcode {
            case .ping: return .ping(frame.payload)
            case .pong: return .pong(frame.payload)
            default: return try Self.parseClose(frame.payload)
            }
        case .text, .binary:
            if fragmentOpcode != nil { throw WebSocketError(.dataFrameInsideFragmentedMessage) }
            fragmentOpcode = frame.opcode
            fragments.removeAll(keepingCapacity: true)
            utf8 = UTF8Validator()
        case .continuation:
            if fragmentOpcode == nil { throw WebSocketError(.continuationWithoutStart) }
        }
        guard let opcode = fragmentOpcode else { return nil }
        guard frame.payload.count <= maxMessageSize - fragments.count else {
            throw WebSocketError(.messageTooLarge(limit: maxMessageSize))
        }
        if opcode == .text, !utf8.validate(frame.payload) { throw WebSocketError(.invalidUTF8) }
        guard frame.fin else {
            fragments.append(contentsOf: frame.payload)
            return nil
        }
        fragmentOpcode = nil
        let whole: [UInt8]
        if fragments.isEmpty {
            whole = frame.payload
        } else {
            fragments.append(contentsOf: frame.payload)
            whole = fragments
            fragments = []
        }
        if opcode == .text {
            guard utf8.isComplete else { throw WebSocketError(.invalidUTF8) }
            return .text(String(decoding: whole, as: UTF8.self))
        }
        return .binary(whole)
    }

    /// Close body: empty, or a valid two-byte code followed by a UTF-8 reason.
    static func parseClose(_ payload: [UInt8]) throws(WebSocketError) -> WebSocketMessage {
        if payload.isEmpty { return .close(code: nil, reason: "") }
        guard payload.count >= 2 else { throw WebSocketError(.closePayloadTooShort) }
        let code = WebSocketCloseCode(UInt16(payload[0]) << 8 | UInt16(payload[1]))
        guard code.isValidOnWire else { throw WebSocketError(.invalidCloseCode(code.rawValue)) }
        let reason = payload[2...]
        guard UTF8Validator.isValid(reason) else { throw WebSocketError(.invalidCloseReason) }
        return .close(code: code, reason: String(decoding: reason, as: UTF8.self))
    }
}
