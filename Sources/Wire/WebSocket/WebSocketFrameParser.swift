/// A sans-I/O WebSocket frame parser (RFC 6455 section 5); see `WebSocketFrame` for the layout.
///
/// Each header field is checked as soon as its bytes arrive, so a bad first byte fails
/// without waiting for the payload. Beyond RFC 6455's MUSTs it also rejects lengths not
/// encoded minimally (1002): the RFC requires senders to use the minimal form, and
/// a peer that does not is broken or probing.
///
/// After an error the parser stays failed and rethrows it.
public struct WebSocketFrameParser: Sendable {
    public let role: WebSocketRole
    /// Largest accepted payload; a longer declared length is 1009 before any payload is read.
    public var maxFrameSize: Int
    /// RSV bits (0x40, 0x20, 0x10 of the first byte) an extension has negotiated; 0 by default.
    public var allowedReservedBits: UInt8 = 0

    private var buffer = HTTPInputBuffer()
    private var failure: WebSocketError?

    public init(role: WebSocketRole, maxFrameSize: Int = 1 << 20) {
        self.role = role
        self.maxFrameSize = maxFrameSize
    }

    public var bufferedByteCount: Int { buffer.count }

    public mutating func append(contentsOf bytes: some Collection<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(bytes)
    }

    /// The next complete frame, or nil when more bytes are needed.
    public mutating func next() throws(WebSocketError) -> WebSocketFrame? {
        if let failure { throw failure }
        do {
            return try parseFrame()
        } catch {
            failure = error
            throw error
        }
    }

    private mutating func parseFrame() throws(WebSocketError) -> WebSocketFrame? {
        let available = buffer.count
        guard available >= 2 else { return nil }
        let base = buffer.readIndex
        let first = buffer.bytes[base]
        let second = buffer.bytes[base + 1]

        let reserved = first & 0x70
        if reserved & ~allowedReservedBits != 0 { throw WebSocketError(.reservedBitsSet(reserved >> 4)) }
        guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
            throw WebSocketError(.reservedOpcode(first & 0x0F))
        }
        let fin = first & 0x80 != 0
        let masked = second & 0x80 != 0
        let shortLength = Int(second & 0x7F)
        if opcode.isControl {
            if !fin { throw WebSocketError(.fragmentedControlFrame) }
            if shortLength > 125 { throw WebSocketError(.controlFrameTooLong(shortLength)) }
        }
        switch role {
        case .server where !masked: throw WebSocketError(.unmaskedClientFrame)
        case .client where masked: throw WebSocketError(.maskedServerFrame)
        default: break
        }

        var headerLength = 2
        let length: UInt64
        switch shortLength {
        case 126:
            headerLength += 2
            guard available >= headerLength else { return nil }
            length = UInt64(buffer.bytes[base + 2]) << 8 | UInt64(buffer.bytes[base + 3])
            if length < 126 { throw WebSocketError(.nonMinimalLength) }
        case 127:
            headerLength += 8
            guard available >= headerLength else { return nil }
            var wide: UInt64 = 0
            for offset in 2..<10 { wide = wide << 8 | UInt64(buffer.bytes[base + offset]) }
            if wide & (1 << 63) != 0 { throw WebSocketError(.lengthHighBitSet) }
            if wide <= 0xFFFF { throw WebSocketError(.nonMinimalLength) }
            length = wide
        default:
            length = UInt64(shortLength)
        }
        guard length <= UInt64(max(maxFrameSize, 0)) else {
            throw WebSocketError(.frameTooLarge(length: length, limit: maxFrameSize))
        }
        let payloadLength = Int(length)

        var maskingKey: UInt32?
        if masked {
            guard available >= headerLength + 4 else { return nil }
            var key: UInt32 = 0
            for offset in headerLength..<(headerLength + 4) { key = key << 8 | UInt32(buffer.bytes[base + offset]) }
            maskingKey = key
            headerLength += 4
        }
        guard available >= headerLength + payloadLength else { return nil }

        buffer.skip(headerLength)
        var payload = buffer.take(upTo: payloadLength)
        if let maskingKey {
            let key = WebSocketFrame.keyBytes(maskingKey)
            for index in payload.indices { payload[index] ^= key[index & 3] }
        }
        return WebSocketFrame(
            fin: fin, opcode: opcode, payload: payload, maskingKey: maskingKey,
            rsv1: first & 0x40 != 0, rsv2: first & 0x20 != 0, rsv3: first & 0x10 != 0)
    }
}
