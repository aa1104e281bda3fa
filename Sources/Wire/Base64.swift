/// Base64 and base64url (RFC 4648 sections 4 and 5) without Foundation.
public enum Base64 {
    private static let standard: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlSafe: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes `bytes`; `urlSafe` picks the `-_` alphabet, `padded` adds `=` to a multiple of 4.
    public static func encode(_ bytes: some Collection<UInt8>, urlSafe: Bool = false, padded: Bool = true) -> String {
        let alphabet = urlSafe ? Self.urlSafe : Self.standard
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= input.count {
            let n = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int((n >> 12) & 63)])
            out.append(alphabet[Int((n >> 6) & 63)])
            out.append(alphabet[Int(n & 63)])
            index += 3
        }
        let rest = input.count - index
        if rest > 0 {
            var n = UInt32(input[index]) << 16
            if rest == 2 { n |= UInt32(input[index + 1]) << 8 }
            out.append(alphabet[Int(n >> 18)])
            out.append(alphabet[Int((n >> 12) & 63)])
            if rest == 2 { out.append(alphabet[Int((n >> 6) & 63)]) }
            if padded { out.append(contentsOf: repeatElement(UInt8(ascii: "="), count: 3 - rest)) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes padded or unpadded text; nil on any character outside the alphabet
    /// (whitespace included), misplaced padding or an impossible length.
    public static func decode(_ text: some StringProtocol, urlSafe: Bool = false) -> [UInt8]? {
        var chars = Array(text.utf8)
        var padding = 0
        while chars.last == UInt8(ascii: "=") {
            chars.removeLast()
            padding += 1
        }
        if padding > 0 && (padding > 2 || (chars.count + padding) % 4 != 0) { return nil }
        if chars.count % 4 == 1 { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for char in chars {
            guard let value = sextet(char, urlSafe: urlSafe) else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8((accumulator >> UInt32(bits)) & 0xFF))
            }
        }
        return out
    }

    private static func sextet(_ char: UInt8, urlSafe: Bool) -> UInt8? {
        switch char {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): char - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): char - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): char - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+") where !urlSafe: 62
        case UInt8(ascii: "/") where !urlSafe: 63
        case UInt8(ascii: "-") where urlSafe: 62
        case UInt8(ascii: "_") where urlSafe: 63
        default: nil
        }
    }
}
