// Named WebSocketFrame+Serialization.swift, not WebSocketFrame.swift, because the fuzz
// target Fuzz/WebSocketFrame.swift is compiled into the same module and file names must differ.

/// One WebSocket frame (RFC 6455 section 5.2), with the payload already unmasked.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-------+-+-------------+-------------------------------+
/// |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
/// |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
/// |N|V|V|V|       |S|             |   (if payload len==126/127)   |
/// | |1|2|3|       |K|             |                               |
/// +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
/// |     Extended payload length continued, if payload len == 127  |
/// + - - - - - - - - - - - - - - - +-------------------------------+
/// |                               |Masking-key, if MASK set to 1  |
/// +-------------------------------+-------------------------------+
/// | Masking-key (continued)       |          Payload Data         |
/// +-------------------------------- - - - - - - - - - - - - - - - +
/// :                     Payload Data continued ...                :
/// +---------------------------------------------------------------+
/// ```
public struct WebSocketFrame: Sendable, Hashable {
    public var fin: Bool
    public var rsv1: Bool
    public var rsv2: Bool
    public var rsv3: Bool
    public var opcode: WebSocketOpcode
    /// The key as the four wire bytes read big-endian; nil for an unmasked frame.
    public var maskingKey: UInt32?
    /// The application data, never masked.
    public var payload: [UInt8]

    public init(
        fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8] = [], maskingKey: UInt32? = nil,
        rsv1: Bool = false, rsv2: Bool = false, rsv3: Bool = false
    ) {
        self.fin = fin
        self.rsv1 = rsv1
        self.rsv2 = rsv2
        self.rsv3 = rsv3
        self.opcode = opcode
        self.maskingKey = maskingKey
        self.payload = payload
    }

    public var masked: Bool { maskingKey != nil }

    /// The frame in wire form, masked with `maskingKey` when it is set. Lengths are
    /// always encoded minimally.
    public func serialize(into buffer: inout [UInt8]) {
        var first = opcode.rawValue
        if fin { first |= 0x80 }
        if rsv1 { first |= 0x40 }
        if rsv2 { first |= 0x20 }
        if rsv3 { first |= 0x10 }
        buffer.reserveCapacity(buffer.count + payload.count + 14)
        buffer.append(first)
        let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
        let length = payload.count
        if length < 126 {
            buffer.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF {
            buffer.append(maskBit | 126)
            buffer.append(UInt8(length >> 8))
            buffer.append(UInt8(length & 0xFF))
        } else {
            buffer.append(maskBit | 127)
            let wide = UInt64(length)
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer.append(UInt8((wide >> UInt64(shift)) & 0xFF))
            }
        }
        guard let maskingKey else {
            buffer.append(contentsOf: payload)
            return
        }
        let key = Self.keyBytes(maskingKey)
        buffer.append(contentsOf: key)
        for (index, byte) in payload.enumerated() {
            buffer.append(byte ^ key[index & 3])
        }
    }

    public func serialized() -> [UInt8] {
        var buffer: [UInt8] = []
        serialize(into: &buffer)
        return buffer
    }

    /// The frame masked with `maskingKey` (a client passes a fresh random key per frame,
    /// RFC 6455 section 5.3) or unmasked when nil.
    public func serialized(maskingKey: UInt32?) -> [UInt8] {
        var copy = self
        copy.maskingKey = maskingKey
        return copy.serialized()
    }

    static func keyBytes(_ key: UInt32) -> [UInt8] {
        [UInt8(key >> 24), UInt8((key >> 16) & 0xFF), UInt8((key >> 8) & 0xFF), UInt8(key & 0xFF)]
    }
}
