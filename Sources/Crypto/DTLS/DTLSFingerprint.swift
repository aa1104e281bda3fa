import COpenSSL

/// Certificate fingerprints as SDP carries them (RFC 8122 §5: `a=fingerprint:sha-256 AB:CD:…`).
enum DTLSFingerprint {
    /// Uppercase hex pairs separated by colons.
    static func format(_ digest: [UInt8]) -> String {
        let hex: [UInt8] = Array("0123456789ABCDEF".utf8)
        var out = [UInt8]()
        out.reserveCapacity(digest.count * 3)
        for (i, byte) in digest.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ":")) }
            out.append(hex[Int(byte >> 4)])
            out.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses `AB:cd:…` (either case) into bytes; nil unless every element is exactly two hex digits.
    static func parse(_ text: String) -> [UInt8]? {
        var bytes = [UInt8]()
        for part in text.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
            guard part.count == 2, let hi = part.first.flatMap(nibble), let lo = part.last.flatMap(nibble) else {
                return nil
            }
            bytes.append(hi << 4 | lo)
        }
        return bytes.isEmpty ? nil : bytes
    }

    /// Equal length and bytes, compared without data-dependent early exit.
    static func matches(_ digest: [UInt8], expected: [UInt8]) -> Bool {
        guard digest.count == expected.count else { return false }
        return digest.withUnsafeBytes { a in
            expected.withUnsafeBytes { b in CRYPTO_memcmp(a.baseAddress, b.baseAddress, a.count) == 0 }
        }
    }

    /// OpenSSL digest for an SDP hash function token (RFC 8122 §5 names: `sha-1`, `sha-256`, …).
    static func messageDigest(forSDPName name: String) -> OpaquePointer? {
        switch name.lowercased() {
        case "sha-1": EVP_sha1()
        case "sha-224": EVP_sha224()
        case "sha-256": EVP_sha256()
        case "sha-384": EVP_sha384()
        case "sha-512": EVP_sha512()
        default: nil
        }
    }

    /// The oldest error on this thread's OpenSSL queue as text, then clears the queue.
    static func lastOpenSSLError() -> String {
        let code = ERR_get_error()
        ERR_clear_error()
        guard code != 0 else { return "no OpenSSL error" }
        var buffer = [CChar](repeating: 0, count: 256)
        ERR_error_string_n(code, &buffer, buffer.count)
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
