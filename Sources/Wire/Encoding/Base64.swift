/// Standard base64 with padding (RFC 4648 section 4), as used by HTTP Basic auth and PEM.
public enum Base64 {
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64Codec.encode(bytes, alphabet: Base64Codec.standard, pad: true)
    }

    public static func encode(_ string: String) -> String { encode(Array(string.utf8)) }

    /// Padding is optional; `nil` on characters outside the alphabet. With
    /// `ignoringWhitespace` line breaks are skipped (PEM bodies).
    public static func decode(_ string: String, ignoringWhitespace: Bool = false) -> [UInt8]? {
        Base64Codec.decode(string.utf8, table: Base64Codec.standardTable, skipWhitespace: ignoringWhitespace)
    }
}
