/// EBML element encoding (RFC 8794), the binary layout under Matroska and WebM.
///
/// ```
///  +-----------+-------------+------------------+
///  | Element ID| Data size   | Data             |
///  | 1-4 bytes | VINT 1-8 B  | size bytes       |
///  +-----------+-------------+------------------+
///
///  VINT: the count of leading zero bits + 1 is the length in bytes;
///        the rest is the value, big-endian.
///   1xxx xxxx                                  7-bit value
///   01xx xxxx xxxx xxxx                       14-bit value
///   0000 0001 xxxx ... (7 more bytes)          56-bit value
///  A size with every value bit set means "unknown size" (only for master elements
///  such as Segment and Cluster that are written before their length is known).
/// ```
///
/// IDs are written as they appear in the Matroska specification: their marker bit is
/// already part of the number (0x1A45DFA3 is four bytes, 0xA3 one).
public enum EBML {
    /// The 8-byte size field meaning "unknown size".
    public static let unknownSize: [UInt8] = [0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]

    /// An element ID's bytes: the number without leading zero bytes.
    public static func id(_ id: UInt32) -> [UInt8] {
        let length = id > 0xFF_FFFF ? 4 : id > 0xFFFF ? 3 : id > 0xFF ? 2 : 1
        return (0..<length).reversed().map { UInt8(truncatingIfNeeded: id >> (8 * $0)) }
    }

    /// A data size in the shortest VINT that holds it (values with all bits set are
    /// reserved for "unknown", so they take the next length).
    public static func size(_ value: Int) -> [UInt8] {
        precondition(value >= 0 && value < (1 << 56) - 1)
        var length = 1
        while length < 8, value >= (1 << (7 * length)) - 1 { length += 1 }
        return size(value, length: length)
    }

    /// A data size in a VINT of exactly `length` bytes, for fields patched later.
    public static func size(_ value: Int, length: Int) -> [UInt8] {
        precondition(length >= 1 && length <= 8 && value >= 0 && value < (1 << (7 * length)) - 1)
        let marked = UInt64(value) | 1 << (7 * UInt64(length))
        return (0..<length).reversed().map { UInt8(truncatingIfNeeded: marked >> (8 * UInt64($0))) }
    }

    /// An element with the given data.
    public static func element(_ id: UInt32, _ data: [UInt8]) -> [UInt8] {
        self.id(id) + size(data.count) + data
    }

    /// An unsigned integer element in the fewest bytes (at least one).
    public static func unsigned(_ id: UInt32, _ value: UInt64) -> [UInt8] {
        var length = 1
        while length < 8, value >> (8 * UInt64(length)) != 0 { length += 1 }
        return element(id, bigEndian(value, length))
    }

    /// A float element as an 8-byte IEEE 754 double.
    public static func float(_ id: UInt32, _ value: Double) -> [UInt8] {
        element(id, bigEndian(value.bitPattern, 8))
    }

    /// A string or UTF-8 element.
    public static func string(_ id: UInt32, _ value: String) -> [UInt8] {
        element(id, Array(value.utf8))
    }

    /// `value`'s low `length` bytes, most significant first.
    public static func bigEndian(_ value: UInt64, _ length: Int) -> [UInt8] {
        (0..<length).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }
}
