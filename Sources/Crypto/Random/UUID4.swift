import Wire
/// Random UUIDs, RFC 4122 section 4.4 (version 4, variant 10), lower-case like Vonage IDs.
public enum UUID4 {
    public static func generate(using source: some RandomSource = SystemRandom()) -> String {
        var b = source.bytes(16)
        b[6] = (b[6] & 0x0F) | 0x40
        b[8] = (b[8] & 0x3F) | 0x80
        let hex = Hex.encode(b)
        var out = ""
        out.reserveCapacity(36)
        for (i, c) in hex.enumerated() {
            if i == 8 || i == 12 || i == 16 || i == 20 { out.append("-") }
            out.append(c)
        }
        return out
    }

    /// True for a canonical lower- or upper-case 8-4-4-4-12 version-4 UUID.
    public static func isValid(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 36 else { return false }
        for (i, c) in u.enumerated() {
            if i == 8 || i == 13 || i == 18 || i == 23 {
                guard c == UInt8(ascii: "-") else { return false }
            } else if Hex.nibble(c) == nil {
                return false
            }
        }
        return u[14] == UInt8(ascii: "4") && [UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"),
            UInt8(ascii: "b"), UInt8(ascii: "A"), UInt8(ascii: "B")].contains(u[19])
    }
}
