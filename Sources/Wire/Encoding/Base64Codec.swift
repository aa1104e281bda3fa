/// The RFC 4648 base64 core shared by the standard and URL-safe alphabets.
enum Base64Codec {
    static let standard = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    static let url = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// 0xFF marks a byte outside the alphabet.
    static let standardTable = table(for: standard)
    static let urlTable = table(for: url)

    private static func table(for alphabet: [UInt8]) -> [UInt8] {
        var t = [UInt8](repeating: 0xFF, count: 256)
        for (i, c) in alphabet.enumerated() { t[Int(c)] = UInt8(i) }
        return t
    }

    static func encode(_ bytes: some Collection<UInt8>, alphabet: [UInt8], pad: Bool) -> String {
        let input = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity((input.count + 2) / 3 * 4)
        var i = 0
        while i + 3 <= input.count {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            out.append(alphabet[Int(n & 63)])
            i += 3
        }
        let rest = input.count - i
        if rest == 1 {
            let n = UInt32(input[i]) << 16
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            if pad { out.append(UInt8(ascii: "=")); out.append(UInt8(ascii: "=")) }
        } else if rest == 2 {
            let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
            out.append(alphabet[Int(n >> 18 & 63)])
            out.append(alphabet[Int(n >> 12 & 63)])
            out.append(alphabet[Int(n >> 6 & 63)])
            if pad { out.append(UInt8(ascii: "=")) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes with optional trailing padding; `nil` on any byte outside the alphabet,
    /// padding in the middle, too much padding, or an impossible length.
    ///
    /// Callers in other modules reach this unspecialized, and reading a collection byte by byte through its
    /// generic witnesses allocated on every byte (850 allocations a JWT); the decoding itself reads a buffer.
    static func decode(_ input: some Collection<UInt8>, table: [UInt8], skipWhitespace: Bool) -> [UInt8]? {
        if let decoded = input.withContiguousStorageIfAvailable({ decodeBuffer($0, table: table, skipWhitespace: skipWhitespace) }) {
            return decoded
        }
        return Array(input).withUnsafeBufferPointer { decodeBuffer($0, table: table, skipWhitespace: skipWhitespace) }
    }

    private static func decodeBuffer(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8], skipWhitespace: Bool) -> [UInt8]? {
        var symbols: [UInt8] = []
        symbols.reserveCapacity(input.count)
        var padding = 0
        for c in input {
            if skipWhitespace, c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 { continue }
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0 else { return nil }  // data after '='
            let v = table[Int(c)]
            guard v != 0xFF else { return nil }
            symbols.append(v)
        }
        let rem = symbols.count % 4
        guard rem != 1 else { return nil }
        if padding > 0 {
            guard padding <= 2, (symbols.count + padding) % 4 == 0 else { return nil }
        }
        var out: [UInt8] = []
        out.reserveCapacity(symbols.count * 3 / 4)
        var i = 0
        while i + 4 <= symbols.count {
            let n = UInt32(symbols[i]) << 18 | UInt32(symbols[i + 1]) << 12 | UInt32(symbols[i + 2]) << 6 | UInt32(symbols[i + 3])
            out.append(UInt8(truncatingIfNeeded: n >> 16))
            out.append(UInt8(truncatingIfNeeded: n >> 8))
            out.append(UInt8(truncatingIfNeeded: n))
            i += 4
        }
        if rem == 2 {
            let n = UInt32(symbols[i]) << 18 | UInt32(symbols[i + 1]) << 12
            out.append(UInt8(truncatingIfNeeded: n >> 16))
        } else if rem == 3 {
            let n = UInt32(symbols[i]) << 18 | UInt32(symbols[i + 1]) << 12 | UInt32(symbols[i + 2]) << 6
            out.append(UInt8(truncatingIfNeeded: n >> 16))
            out.append(UInt8(truncatingIfNeeded: n >> 8))
        }
        return out
    }
}
