/// Source description (RFC 3550 §6.5): per-SSRC items such as CNAME.
///
/// ```
///         0                   1                   2                   3
///         0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// header |V=2|P|    SC   |  PT=SDES=202  |             length            |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// chunk  |                          SSRC/CSRC_1                          |
///   1    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |    type (1)   |    length     | text (CNAME) ...              |
///        +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///        |  ... items, then a zero type byte and padding to 32 bits      |
///        +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// ```
public struct SourceDescription: Hashable, Sendable {
    /// SDES item types (RFC 3550 §12.2).
    public struct ItemType: RawRepresentable, Hashable, Sendable {
        public var rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public static let cname = ItemType(rawValue: 1)
        public static let name = ItemType(rawValue: 2)
        public static let email = ItemType(rawValue: 3)
        public static let phone = ItemType(rawValue: 4)
        public static let location = ItemType(rawValue: 5)
        public static let tool = ItemType(rawValue: 6)
        public static let note = ItemType(rawValue: 7)
        public static let priv = ItemType(rawValue: 8)
        /// RFC 8843 §15 MID in SDES.
        public static let mid = ItemType(rawValue: 15)
    }

    public struct Item: Hashable, Sendable {
        public var type: ItemType
        /// Raw value bytes (UTF-8 text for all standard items), at most 255.
        public var value: [UInt8]
        public init(type: ItemType, value: [UInt8]) {
            self.type = type
            self.value = value
        }
        public init(type: ItemType, text: String) { self.init(type: type, value: Array(text.utf8)) }
        public var text: String { String(decoding: value, as: UTF8.self) }
    }

    public struct Chunk: Hashable, Sendable {
        public var source: UInt32
        public var items: [Item]
        public init(source: UInt32, items: [Item]) {
            self.source = source
            self.items = items
        }
        public var cname: String? { items.first { $0.type == .cname }?.text }
    }

    public var chunks: [Chunk]

    public init(chunks: [Chunk]) { self.chunks = chunks }

    /// One chunk with just a CNAME, what every RTCP compound must carry (RFC 3550 §6.1).
    public init(source: UInt32, cname: String) {
        self.chunks = [Chunk(source: source, items: [Item(type: .cname, text: cname)])]
    }

    init(count: UInt8, body b: UnsafeRawBufferPointer) throws(RTCPError) {
        chunks = []
        var o = 0
        for _ in 0..<count {
            try b.requireRTCP(o + 4, type: .sourceDescription)
            var chunk = Chunk(source: PacketBytes.u32(b, o), items: [])
            o += 4
            while true {
                try b.requireRTCP(o + 1, type: .sourceDescription)
                if b[o] == 0 {
                    // End of items: skip the null and pad to the next 32-bit boundary.
                    o = min((o + 4) & ~3, b.count)
                    break
                }
                try b.requireRTCP(o + 2, type: .sourceDescription)
                let length = Int(b[o + 1])
                try b.requireRTCP(o + 2 + length, type: .sourceDescription)
                chunk.items.append(Item(
                    type: ItemType(rawValue: b[o]), value: Array(UnsafeRawBufferPointer(rebasing: b[(o + 2)..<(o + 2 + length)]))))
                o += 2 + length
            }
            chunks.append(chunk)
        }
    }

    func serializeBody(into out: inout [UInt8]) throws(RTCPError) -> UInt8 {
        guard chunks.count <= 31 else {
            throw .overflow(packetType: RTCPPacketType.sourceDescription.rawValue, detail: "\(chunks.count) chunks > 31")
        }
        for chunk in chunks {
            let start = out.count
            PacketBytes.append32(&out, chunk.source)
            for item in chunk.items {
                guard item.type.rawValue != 0, item.value.count <= 255 else {
                    throw .overflow(packetType: RTCPPacketType.sourceDescription.rawValue,
                                    detail: "item type \(item.type.rawValue) with \(item.value.count) bytes")
                }
                out.append(item.type.rawValue)
                out.append(UInt8(item.value.count))
                out.append(contentsOf: item.value)
            }
            out.append(0)
            while (out.count - start) % 4 != 0 { out.append(0) }
        }
        return UInt8(chunks.count)
    }
}

/// Goodbye (RFC 3550 §6.6): the listed sources are leaving.
///
/// ```
///        0                   1                   2                   3
///        0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       |V=2|P|    SC   |   PT=BYE=203  |             length            |
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       |                           SSRC/CSRC                           |
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///       :                              ...                              :
///       +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+
/// (opt) |     length    |               reason for leaving            ...
///       +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
public struct Goodbye: Hashable, Sendable {
    public var sources: [UInt32]
    /// Reason bytes (UTF-8), empty when absent; at most 255.
    public var reason: [UInt8]

    public init(sources: [UInt32], reason: String = "") {
        self.sources = sources
        self.reason = Array(reason.utf8)
    }

    public var reasonText: String { String(decoding: reason, as: UTF8.self) }

    init(count: UInt8, body b: UnsafeRawBufferPointer) throws(RTCPError) {
        let n = Int(count)
        try b.requireRTCP(4 * n, type: .goodbye)
        sources = (0..<n).map { PacketBytes.u32(b, 4 * $0) }
        reason = []
        let o = 4 * n
        if o < b.count {
            let length = Int(b[o])
            try b.requireRTCP(o + 1 + length, type: .goodbye)
            reason = Array(UnsafeRawBufferPointer(rebasing: b[(o + 1)..<(o + 1 + length)]))
        }
    }

    func serializeBody(into out: inout [UInt8]) throws(RTCPError) -> UInt8 {
        guard sources.count <= 31, reason.count <= 255 else {
            throw .overflow(packetType: RTCPPacketType.goodbye.rawValue, detail: "\(sources.count) sources, \(reason.count)-byte reason")
        }
        let start = out.count
        for source in sources { PacketBytes.append32(&out, source) }
        if !reason.isEmpty {
            out.append(UInt8(reason.count))
            out.append(contentsOf: reason)
            while (out.count - start) % 4 != 0 { out.append(0) }
        }
        return UInt8(sources.count)
    }
}
