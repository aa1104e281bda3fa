import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL's EVP interface.
public enum SHA256 {
    public static let byteCount = 32

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { Digest.compute(EVP_sha256(), $0, size: byteCount) }
    }

    public static func hash(_ string: String) -> [UInt8] { hash(Array(string.utf8)) }

    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] { hash(Array(bytes)) }
}
