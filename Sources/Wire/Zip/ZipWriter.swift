/// A ZIP archive writer for stored (uncompressed, method 0) entries, without Zip64
/// (PKWARE APPNOTE 6.3.x: §4.3.7 local file header, §4.3.12 central directory header,
/// §4.3.16 end of central directory record). All fields are little-endian.
///
/// ```
///  [local file header 1][file data 1] ... [local file header n][file data n]
///  [central directory header 1] ... [central directory header n]
///  [end of central directory record]
///
///  local file header (30 bytes + name):
///   0 signature 0x04034b50   4 version needed   6 flags   8 method
///  10 mod time  12 mod date  14 CRC-32  18 compressed size  22 uncompressed size
///  26 name length  28 extra length  30 name
///
///  central directory header (46 bytes + name):
///   0 signature 0x02014b50   4 version made by   6 version needed   8 flags
///  10 method  12 mod time  14 mod date  16 CRC-32  20 compressed size
///  24 uncompressed size  28 name length  30 extra length  32 comment length
///  34 disk number start  36 internal attributes  38 external attributes
///  42 offset of local header  46 name
///
///  end of central directory record (22 bytes):
///   0 signature 0x06054b50   4 this disk   6 disk with the directory
///   8 entries on this disk  10 entries  12 directory size  16 directory offset
///  20 comment length
/// ```
///
/// The caller knows each file's size and CRC-32 before writing it, so they go in the local
/// header and no data descriptor follows. Flag bit 11 marks names as UTF-8. A value that would
/// need Zip64 (a size or offset of 0xFFFFFFFF or more, more than 65,535 entries, a name
/// longer than 65,535 bytes) is refused: `entry` returns nil and the archive stays as it was.
public struct ZipWriter: Sendable {
    static let localHeaderSignature: UInt32 = 0x0403_4B50
    static let centralHeaderSignature: UInt32 = 0x0201_4B50
    static let endSignature: UInt32 = 0x0605_4B50
    /// 2.0: the lowest version that readers expect for stored entries with UTF-8 names.
    static let versionNeeded: UInt16 = 20
    /// Upper byte 3: Unix, so the external attributes carry a file mode; lower byte: 6.3.
    static let versionMadeBy: UInt16 = 3 << 8 | 63
    static let utf8Flag: UInt16 = 1 << 11
    /// A regular file, rw-r--r--, in the upper half of the external attributes.
    static let externalAttributes: UInt32 = 0o100644 << 16
    /// The largest size or offset a 32-bit field holds without meaning "see Zip64".
    public static let maxValue = 0xFFFF_FFFE
    public static let maxEntries = 65_535

    /// Bytes the archive has so far, counting the file data the caller writes after each header.
    public private(set) var offset = 0
    public private(set) var entries = 0
    private var directory: [UInt8] = []

    public init() {}

    /// The local file header for a stored file of `size` bytes; the caller writes the file's
    /// bytes right after it. Nil (and nothing recorded) when the entry would need Zip64.
    /// `modified` is a local date and time; MS-DOS time keeps even seconds from 1980 to 2107.
    public mutating func entry(name: String, size: Int,
                               crc32: UInt32,
                               modified: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)) -> [UInt8]? {
        let nameBytes = Array(name.utf8)
        guard entries < Self.maxEntries, nameBytes.count <= 0xFFFF, size >= 0, size <= Self.maxValue,
              offset <= Self.maxValue else { return nil }
        let header = 30 + nameBytes.count
        let end = offset + header + size
        let directorySize = directory.count + 46 + nameBytes.count
        // The directory starts where this entry ends; both its offset and its size must fit.
        guard end <= Self.maxValue, directorySize <= Self.maxValue else { return nil }

        let (time, date) = Self.dosTime(modified)
        // The fields both headers carry, in the same order: version needed, flags, method (0, stored),
        // time, date, CRC-32, compressed and uncompressed size, name length.
        func shared(_ out: inout [UInt8]) {
            Self.put16(&out, Self.versionNeeded)
            Self.put16(&out, Self.utf8Flag)
            Self.put16(&out, 0)
            Self.put16(&out, time)
            Self.put16(&out, date)
            Self.put32(&out, crc32)
            Self.put32(&out, UInt32(size))
            Self.put32(&out, UInt32(size))
            Self.put16(&out, UInt16(nameBytes.count))
        }
        var local: [UInt8] = []
        local.reserveCapacity(header)
        Self.put32(&local, Self.localHeaderSignature)
        shared(&local)
        Self.put16(&local, 0)
        local += nameBytes

        Self.put32(&directory, Self.centralHeaderSignature)
        Self.put16(&directory, Self.versionMadeBy)
        shared(&directory)
        Self.put16(&directory, 0)
        Self.put16(&directory, 0)
        Self.put16(&directory, 0)
        Self.put16(&directory, 0)
        Self.put32(&directory, Self.externalAttributes)
        Self.put32(&directory, UInt32(offset))
        directory += nameBytes

        offset = end
        entries += 1
        return local
    }

    /// The central directory and the end of central directory record: the archive's last bytes.
    public func end() -> [UInt8] {
        var out = directory
        out.reserveCapacity(directory.count + 22)
        Self.put32(&out, Self.endSignature)
        Self.put16(&out, 0)
        Self.put16(&out, 0)
        Self.put16(&out, UInt16(entries))
        Self.put16(&out, UInt16(entries))
        Self.put32(&out, UInt32(directory.count))
        Self.put32(&out, UInt32(offset))
        Self.put16(&out, 0)
        return out
    }

    /// MS-DOS time (hour << 11 | minute << 5 | second / 2) and date
    /// ((year - 1980) << 9 | month << 5 | day), each field clamped to its range.
    static func dosTime(_ t: (year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int)) -> (time: UInt16, date: UInt16) {
        let year = min(max(t.year, 1980), 2107) - 1980
        let month = min(max(t.month, 1), 12), day = min(max(t.day, 1), 31)
        let hour = min(max(t.hour, 0), 23), minute = min(max(t.minute, 0), 59), second = min(max(t.second, 0), 59)
        return (UInt16(hour << 11 | minute << 5 | second / 2), UInt16(year << 9 | month << 5 | day))
    }

    private static func put16(_ out: inout [UInt8], _ value: UInt16) {
        out.append(UInt8(truncatingIfNeeded: value))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    private static func put32(_ out: inout [UInt8], _ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { out.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
