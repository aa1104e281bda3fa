/// G.711 A-law (ITU-T G.711 §2, PCMA, RTP payload type 8): 8-bit codes for 13-bit linear samples,
/// carried here in the top 13 bits of an Int16.
///
/// A code is sign, segment (3 bits) and step (4 bits) with the even bits inverted (XOR 0x55);
/// segments 0 and 1 step by 2, segment n ≥ 2 by 2^n (in 13-bit units).
public enum ALaw {
    /// Upper bound of each segment, in 13-bit magnitude units.
    static let segmentEnds: [Int] = [0x1F, 0x3F, 0x7F, 0xFF, 0x1FF, 0x3FF, 0x7FF, 0xFFF]

    /// The code for one linear sample.
    public static func encode(_ sample: Int16) -> UInt8 {
        var value = Int(sample) >> 3
        let mask: Int
        if value >= 0 { mask = 0xD5 } else { mask = 0x55; value = -value - 1 }
        var segment = 0
        while segment < 8 && value > segmentEnds[segment] { segment += 1 }
        if segment == 8 { return UInt8(0x7F ^ mask) }
        let step = (segment < 2 ? value >> 1 : value >> segment) & 0x0F
        return UInt8((segment << 4 | step) ^ mask)
    }

    /// The linear value of one code.
    public static func decode(_ code: UInt8) -> Int16 { decodeTable[Int(code)] }

    /// All 256 decoded values, indexed by code.
    public static let decodeTable: [Int16] = (0..<256).map { code in
        let a = Int(code) ^ 0x55
        let segment = (a & 0x70) >> 4
        var t = (a & 0x0F) << 4
        switch segment {
        case 0: t += 8
        case 1: t += 0x108
        default: t = (t + 0x108) << (segment - 1)
        }
        return Int16(a & 0x80 != 0 ? t : -t)
    }
}
