/// G.711 µ-law (ITU-T G.711 §3, PCMU, RTP payload type 0): 8-bit logarithmic codes for 14-bit
/// linear samples, carried here in the top 14 bits of an Int16.
///
/// A code is the bit inversion of sign (1 bit), segment (3 bits) and step within the segment
/// (4 bits); segment n spans 16 steps of 2^(n+1) (in 14-bit units) above a bias of 33.
public enum MuLaw {
    static let bias = 0x84
    static let clip = 32635

    /// The code for one linear sample.
    public static func encode(_ sample: Int16) -> UInt8 {
        var magnitude = Int(sample)
        var sign = 0
        if magnitude < 0 { magnitude = -magnitude; sign = 0x80 }
        magnitude = min(magnitude, clip) + bias
        // The segment is the position of the highest set bit above bit 7 (magnitude >= 0x84).
        let segment = (Int.bitWidth - 1 - magnitude.leadingZeroBitCount) - 7
        let step = (magnitude >> (segment + 3)) & 0x0F
        return ~UInt8(sign | segment << 4 | step)
    }

    /// The linear value of one code.
    public static func decode(_ code: UInt8) -> Int16 { decodeTable[Int(code)] }

    /// All 256 decoded values, indexed by code.
    public static let decodeTable: [Int16] = (0..<256).map { code in
        let u = ~UInt8(code)
        let step = Int(u & 0x0F), segment = Int(u & 0x70) >> 4
        let t = ((step << 3) + bias) << segment
        return Int16(u & 0x80 != 0 ? bias - t : t - bias)
    }
}
