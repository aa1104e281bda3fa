import COpenSSL

/// MD5 (RFC 1321) through OpenSSL's EVP interface; only for protocols that mandate it (SIP digest, RFC 2617).
public enum MD5 {
    public static let byteCount = 16

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { Digest.compute(EVP_md5(), $0, size: byteCount) }
    }

    public static func hash(_ string: String) -> [UInt8] { hash(Array(string.utf8)) }
}
