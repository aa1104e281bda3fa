/// A transport address carried in MAPPED-ADDRESS / XOR-MAPPED-ADDRESS (RFC 8489 §14.1-14.2).
///
/// Stored as two 64-bit halves so it is a plain value without heap storage: an IPv4
/// address sits in the low 32 bits of `low`.
public struct STUNAddress: Hashable, Sendable, CustomStringConvertible {
    /// Address family codes from RFC 8489 §14.1.
    public enum Family: UInt8, Sendable {
        case ipv4 = 0x01
        case ipv6 = 0x02
    }

    public var family: Family
    public var port: UInt16
    /// Upper 64 bits of an IPv6 address; zero for IPv4.
    public var high: UInt64
    /// Lower 64 bits of an IPv6 address, or the IPv4 address in the low 32 bits.
    public var low: UInt64

    /// An IPv4 address given as a host-order 32-bit value (192.0.2.1 is 0xC0000201).
    public static func ipv4(_ address: UInt32, port: UInt16) -> STUNAddress {
        STUNAddress(family: .ipv4, port: port, high: 0, low: UInt64(address))
    }

    /// An IPv6 address from its two halves.
    public static func ipv6(high: UInt64, low: UInt64, port: UInt16) -> STUNAddress {
        STUNAddress(family: .ipv6, port: port, high: high, low: low)
    }

    public init(family: Family, port: UInt16, high: UInt64, low: UInt64) {
        self.family = family
        self.port = port
        self.high = family == .ipv4 ? 0 : high
        self.low = family == .ipv4 ? low & 0xFFFF_FFFF : low
    }

    /// Parses dotted-quad IPv4 or RFC 4291 text IPv6 (with `::`), as found in SDP candidates.
    public init?(_ text: some StringProtocol, port: UInt16) {
        if let v4 = STUNAddress.parseIPv4(Substring(text)) {
            self = .ipv4(v4, port: port)
        } else if let (high, low) = STUNAddress.parseIPv6(Substring(text)) {
            self = .ipv6(high: high, low: low, port: port)
        } else {
            return nil
        }
    }

    /// The address in network byte order: 4 bytes for IPv4, 16 for IPv6.
    public var addressBytes: [UInt8] {
        var out: [UInt8] = []
        if family == .ipv4 {
            PacketBytes.append32(&out, UInt32(truncatingIfNeeded: low))
        } else {
            PacketBytes.append64(&out, high)
            PacketBytes.append64(&out, low)
        }
        return out
    }

    /// The address without the port (`192.0.2.1`, `2001:db8::1`).
    public var host: String {
        if family == .ipv4 {
            let a = UInt32(truncatingIfNeeded: low)
            return "\(a >> 24).\((a >> 16) & 0xFF).\((a >> 8) & 0xFF).\(a & 0xFF)"
        }
        let groups = (0..<8).map { i -> UInt16 in
            let word = i < 4 ? high : low
            return UInt16(truncatingIfNeeded: word >> (48 - 16 * UInt64(i % 4)))
        }
        // RFC 5952 §4.2: compress the longest run (length >= 2) of zero groups.
        var bestStart = -1, bestLength = 0, runStart = -1
        for i in 0...8 {
            if i < 8 && groups[i] == 0 {
                if runStart < 0 { runStart = i }
            } else if runStart >= 0 {
                if i - runStart > bestLength { bestStart = runStart; bestLength = i - runStart }
                runStart = -1
            }
        }
        if bestLength < 2 { bestStart = -1 }
        var text = ""
        var i = 0
        while i < 8 {
            if i == bestStart {
                text += "::"
                i += bestLength
                continue
            }
            if !text.isEmpty && !text.hasSuffix(":") { text += ":" }
            text += String(groups[i], radix: 16)
            i += 1
        }
        return text
    }

    public var description: String {
        family == .ipv4 ? "\(host):\(port)" : "[\(host)]:\(port)"
    }

    static func parseIPv4(_ text: Substring) -> UInt32? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return nil }
        var value: UInt32 = 0
        for part in parts {
            guard !part.isEmpty, part.count <= 3, part.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let octet = UInt8(part) else { return nil }
            value = value << 8 | UInt32(octet)
        }
        return value
    }

    static func parseIPv6(_ text: Substring) -> (UInt64, UInt64)? {
        guard text.count >= 2, text.count <= 45 else { return nil }
        let halves = text.split(separator: "::", maxSplits: 1, omittingEmptySubsequences: false)
        guard halves.count <= 2, !halves.contains(where: { $0.contains("::") }) else { return nil }
        func groups(_ part: Substring) -> [UInt16]? {
            if part.isEmpty { return [] }
            var out: [UInt16] = []
            let pieces = part.split(separator: ":", omittingEmptySubsequences: false)
            for (index, piece) in pieces.enumerated() {
                if index == pieces.count - 1, piece.contains("."), let v4 = parseIPv4(piece) {
                    out.append(UInt16(v4 >> 16))
                    out.append(UInt16(v4 & 0xFFFF))
                    continue
                }
                guard (1...4).contains(piece.count), let group = UInt16(piece, radix: 16) else { return nil }
                out.append(group)
            }
            return out
        }
        guard let head = groups(halves[0]) else { return nil }
        var all: [UInt16]
        if halves.count == 2 {
            guard let tail = groups(halves[1]), head.count + tail.count <= 7 else { return nil }
            all = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            guard head.count == 8 else { return nil }
            all = head
        }
        var high: UInt64 = 0, low: UInt64 = 0
        for i in 0..<4 { high = high << 16 | UInt64(all[i]) }
        for i in 4..<8 { low = low << 16 | UInt64(all[i]) }
        return (high, low)
    }
}
