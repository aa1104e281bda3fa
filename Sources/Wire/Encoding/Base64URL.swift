/// URL-safe base64 without padding (RFC 4648 section 5), as JWS compact serialization
/// requires (RFC 7515 section 2).
public enum Base64URL {
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64Codec.encode(bytes, alphabet: Base64Codec.url, pad: false)
    }

    public static func encode(_ string: String) -> String { encode(Array(string.utf8)) }

    /// Accepts input with or without `=` padding; `nil` on any character outside the
    /// URL-safe alphabet (including `+`, `/` and whitespace).
    public static func decode(_ string: String) -> [UInt8]? { decode(bytes: string.utf8) }

    public static func decode(bytes: some Collection<UInt8>) -> [UInt8]? {
        Base64Codec.decode(bytes, table: Base64Codec.urlTable, skipWhitespace: false)
    }
}
