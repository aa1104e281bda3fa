import Testing
@testable import Wire

@Suite("ZIP writer")
struct ZipWriterTests {
    static let modified = (year: 2024, month: 5, day: 17, hour: 13, minute: 45, second: 31)

    static func le16(_ b: [UInt8], _ o: Int) -> Int { Int(b[o]) | Int(b[o + 1]) << 8 }
    static func le32(_ b: [UInt8], _ o: Int) -> Int { le16(b, o) | le16(b, o + 2) << 16 }

    /// An archive of `files`, written as a caller would: header, then the file's bytes.
    static func archive(_ files: [(String, [UInt8])]) throws -> [UInt8] {
        var zip = ZipWriter()
        var out: [UInt8] = []
        for (name, data) in files {
            let header = zip.entry(name: name, size: data.count, crc32: CRC32.checksum(data), modified: modified)
            out += try #require(header)
            out += data
        }
        #expect(zip.offset == out.count)
        return out + zip.end()
    }

    @Test("a two-file archive: signatures, sizes, CRCs, and central directory offsets that point at the local headers")
    func twoFiles() throws {
        let files: [(String, [UInt8])] = [("manifest.json", Array("{\"a\":1}".utf8)), ("vidéo/stream 1.webm", (0..<1_000).map { UInt8($0 % 251) })]
        let zip = try Self.archive(files)

        // End of central directory: the last 22 bytes (no comment).
        let end = zip.count - 22
        #expect(Self.le32(zip, end) == 0x0605_4B50)
        #expect(Self.le16(zip, end + 8) == 2 && Self.le16(zip, end + 10) == 2)
        let directorySize = Self.le32(zip, end + 12), directoryOffset = Self.le32(zip, end + 16)
        #expect(directoryOffset + directorySize == end)
        #expect(Self.le16(zip, end + 20) == 0)

        var o = directoryOffset
        for (name, data) in files {
            let nameBytes = Array(name.utf8)
            #expect(Self.le32(zip, o) == 0x0201_4B50)
            #expect(Self.le16(zip, o + 8) & 0x0800 != 0, "UTF-8 names")
            #expect(Self.le16(zip, o + 10) == 0, "stored")
            #expect(Self.le32(zip, o + 16) == Int(CRC32.checksum(data)))
            #expect(Self.le32(zip, o + 20) == data.count && Self.le32(zip, o + 24) == data.count)
            #expect(Array(zip[(o + 46)..<(o + 46 + nameBytes.count)]) == nameBytes)
            let local = Self.le32(zip, o + 42)
            // The local header it points at says the same.
            #expect(Self.le32(zip, local) == 0x0403_4B50)
            #expect(Array(zip[(local + 6)..<(local + 26)]) == Array(zip[(o + 8)..<(o + 28)]), "flags, method, time, CRC, sizes")
            #expect(Self.le16(zip, local + 26) == nameBytes.count && Self.le16(zip, local + 28) == 0)
            #expect(Array(zip[(local + 30)..<(local + 30 + nameBytes.count)]) == nameBytes)
            let start = local + 30 + nameBytes.count
            #expect(Array(zip[start..<(start + data.count)]) == data)
            #expect(CRC32.checksum(zip[start..<(start + data.count)]) == CRC32.checksum(data))
            o += 46 + nameBytes.count
        }
        #expect(o == end)
    }

    @Test("CRC-32 is the IEEE one ZIP uses")
    func crcCheckValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
    }

    @Test("times are MS-DOS times: even seconds, years from 1980")
    func dosTime() {
        let (time, date) = ZipWriter.dosTime(Self.modified)
        #expect(time == 13 << 11 | 45 << 5 | 15)
        #expect(date == 44 << 9 | 5 << 5 | 17)
        #expect(ZipWriter.dosTime((1970, 1, 1, 0, 0, 0)).date == 1 << 5 | 1, "clamped to 1980")
    }

    @Test("what would need Zip64 is refused and leaves the archive as it was")
    func limits() {
        var zip = ZipWriter()
        let tooBig = zip.entry(name: "big", size: 0xFFFF_FFFF, crc32: 0, modified: Self.modified)
        #expect(tooBig == nil)
        let longName = zip.entry(name: String(repeating: "n", count: 65_536), size: 0, crc32: 0, modified: Self.modified)
        #expect(longName == nil)
        let nearLimit = zip.entry(name: "a", size: 0xFFFF_FF00, crc32: 0, modified: Self.modified)
        #expect(nearLimit != nil)
        let pastLimit = zip.entry(name: "b", size: 0x100, crc32: 0, modified: Self.modified)
        #expect(pastLimit == nil, "would end past 4 GiB")
        #expect(zip.entries == 1 && zip.offset == 31 + 0xFFFF_FF00)
        let end = zip.end()
        #expect(end.count == 46 + 1 + 22)
    }

    @Test("at most 65,535 entries")
    func entryCount() {
        var zip = ZipWriter()
        for _ in 0..<ZipWriter.maxEntries {
            guard zip.entry(name: "f", size: 0, crc32: 0, modified: Self.modified) != nil else { break }
        }
        #expect(zip.entries == 65_535)
        let oneMore = zip.entry(name: "f", size: 0, crc32: 0, modified: Self.modified)
        #expect(oneMore == nil)
        let end = zip.end()
        #expect(Self.le16(end, end.count - 12) == 65_535)
    }
}
