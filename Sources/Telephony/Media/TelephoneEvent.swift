/// An RFC 4733 telephone-event payload (§2.3):
///
/// ```
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |     event     |E|R| volume    |          duration             |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct TelephoneEvent: Hashable, Sendable {
    /// 0-9, 10 = `*`, 11 = `#`, 12-15 = A-D, 16 = flash.
    public var event: UInt8
    public var end: Bool
    /// Power level below 0 dBm0, 0-63.
    public var volume: UInt8
    /// In RTP timestamp units since the event began.
    public var duration: UInt16

    public init(event: UInt8, end: Bool, volume: UInt8 = 10, duration: UInt16) {
        self.event = event
        self.end = end
        self.volume = volume & 0x3F
        self.duration = duration
    }

    public static let size = 4

    /// Reads the first four bytes; nil when fewer arrived or the event is out of the DTMF range.
    public init?(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count >= Self.size, bytes[0] <= 16 else { return nil }
        event = bytes[0]
        end = bytes[1] & 0x80 != 0
        volume = bytes[1] & 0x3F
        duration = UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    public func write(to out: UnsafeMutableRawBufferPointer) {
        out[0] = event
        out[1] = (end ? 0x80 : 0) | volume
        out[2] = UInt8(duration >> 8)
        out[3] = UInt8(duration & 0xFF)
    }

    /// The event code of a DTMF key, nil for anything else.
    public static func code(of digit: Character) -> UInt8? {
        switch digit {
        case "0"..."9": digit.asciiValue.map { $0 - 48 }
        case "*": 10
        case "#": 11
        case "A"..."D": digit.asciiValue.map { $0 - 65 + 12 }
        default: nil
        }
    }

    public static func digit(of code: UInt8) -> Character? {
        switch code {
        case 0...9: Character(UnicodeScalar(48 + code))
        case 10: "*"
        case 11: "#"
        case 12...15: Character(UnicodeScalar(65 + code - 12))
        default: nil
        }
    }
}
