/// An RFC 4733 telephone-event payload (§2.3): one named event, 4 bytes.
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |     event     |E|R| volume    |          duration             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
/// E marks the end of the event (sent three times, §2.5.1.4); volume is −dBm0 (0–63); duration
/// counts RTP timestamp units since the event's start (its RTP timestamp, shared by every packet).
public struct TelephoneEvent: Sendable, Hashable {
    public var event: UInt8
    public var end: Bool
    /// Power level as −dBm0, 0...63.
    public var volume: UInt8
    public var duration: UInt16

    public static let length = 4

    public enum ParseError: Error, Equatable, Sendable {
        case truncated(needed: Int, available: Int)
        case trailingBytes(Int)
    }

    public init(event: UInt8, end: Bool = false, volume: UInt8 = 10, duration: UInt16) {
        self.event = event
        self.end = end
        self.volume = min(volume, 63)
        self.duration = duration
    }

    public init(digit: DTMFDigit, end: Bool = false, volume: UInt8 = 10, duration: UInt16) {
        self.init(event: digit.rawValue, end: end, volume: volume, duration: duration)
    }

    /// The DTMF key, when the event is one (0–15).
    public var digit: DTMFDigit? { DTMFDigit(rawValue: event) }

    /// Parses one payload. Several events in one packet (§2.5.1.5 redundancy) are not used by
    /// telephony peers in practice and are refused as trailing bytes.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(ParseError) -> TelephoneEvent {
        guard bytes.count >= length else { throw .truncated(needed: length, available: bytes.count) }
        guard bytes.count == length else { throw .trailingBytes(bytes.count - length) }
        // The R bit is reserved: ignored on receipt (§2.3.3).
        return TelephoneEvent(event: bytes[0], end: bytes[1] & 0x80 != 0, volume: bytes[1] & 0x3F,
                              duration: UInt16(bytes[2]) << 8 | UInt16(bytes[3]))
    }

    public static func parse(_ bytes: [UInt8]) throws(ParseError) -> TelephoneEvent {
        try bytes.withUnsafeBufferPointer { (b) throws(ParseError) in try parse(UnsafeRawBufferPointer(b)) }
    }

    /// Writes the 4 bytes into `output` (at least 4 bytes); returns 4.
    @discardableResult
    public func serialize(into output: UnsafeMutableRawBufferPointer) -> Int {
        precondition(output.count >= Self.length, "telephone-event needs 4 bytes")
        output[0] = event
        output[1] = (end ? 0x80 : 0) | (volume & 0x3F)
        output[2] = UInt8(duration >> 8)
        output[3] = UInt8(duration & 0xFF)
        return Self.length
    }

    public func serialized() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: Self.length)
        b.withUnsafeMutableBytes { _ = serialize(into: $0) }
        return b
    }
}
