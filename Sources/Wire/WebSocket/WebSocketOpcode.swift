/// A frame opcode (RFC 6455 section 5.2); 0x3-0x7 and 0xB-0xF are reserved and rejected.
public enum WebSocketOpcode: UInt8, Sendable, Hashable, CaseIterable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Control frames (close, ping, pong) may not be fragmented and carry at most 125 bytes.
    public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// Which end of the connection a parser sits at; it decides which way masking must go
/// (RFC 6455 section 5.1: clients mask, servers do not).
public enum WebSocketRole: Sendable, Hashable {
    case server
    case client
}
