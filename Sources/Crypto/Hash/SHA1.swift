import COpenSSL

/// SHA-1 (FIPS 180-4). Only for protocols that mandate it (WebSocket accept keys,
/// STUN MESSAGE-INTEGRITY, SRTP auth); never for new signatures.
public enum SHA1 {
    public static let byteCount = 20

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        bytes.withUnsafeBytes { Digest.compute(EVP_sha1(), $0, size: byteCount) }
    }

    public static func hash(_ string: String) -> [UInt8] { hash(Array(string.utf8)) }

    public static func hash(_ bytes: some Sequence<UInt8>) -> [UInt8] { hash(Array(bytes)) }
}
