extension WebSocketFrame {
    public static func text(_ text: String, fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: .text, payload: Array(text.utf8))
    }

    public static func binary(_ bytes: [UInt8], fin: Bool = true) -> WebSocketFrame {
        WebSocketFrame(fin: fin, opcode: .binary, payload: bytes)
    }

    /// A ping; the payload is cut to the 125 bytes a control frame may carry.
    public static func ping(_ payload: [UInt8] = []) -> WebSocketFrame {
        WebSocketFrame(opcode: .ping, payload: Array(payload.prefix(125)))
    }

    /// A pong; the payload is cut to the 125 bytes a control frame may carry.
    public static func pong(_ payload: [UInt8] = []) -> WebSocketFrame {
        WebSocketFrame(opcode: .pong, payload: Array(payload.prefix(125)))
    }

    /// A close frame (RFC 6455 section 5.5.1): a two-byte code, then a UTF-8 reason cut at
    /// a character boundary to fit in 123 bytes. A nil code sends an empty body.
    public static func close(code: WebSocketCloseCode? = .normalClosure, reason: String = "") -> WebSocketFrame {
        guard let code else { return WebSocketFrame(opcode: .close) }
        var payload: [UInt8] = [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)]
        var used = 0
        for scalar in reason.unicodeScalars {
            let encoded = Array(String(scalar).utf8)
            guard used + encoded.count <= 123 else { break }
            payload.append(contentsOf: encoded)
            used += encoded.count
        }
        return WebSocketFrame(opcode: .close, payload: payload)
    }
}
