import COpenSSL

/// HMAC (RFC 2104) over SHA-1 or SHA-256.
public enum HMAC {
    public static func sha256(key: [UInt8], data: [UInt8]) -> [UInt8] {
        compute(EVP_sha256(), key: key, data: data, size: SHA256.byteCount)
    }

    public static func sha1(key: [UInt8], data: [UInt8]) -> [UInt8] {
        compute(EVP_sha1(), key: key, data: data, size: SHA1.byteCount)
    }

    public static func sha256(key: some Sequence<UInt8>, data: some Sequence<UInt8>) -> [UInt8] {
        sha256(key: Array(key), data: Array(data))
    }

    public static func sha1(key: some Sequence<UInt8>, data: some Sequence<UInt8>) -> [UInt8] {
        sha1(key: Array(key), data: Array(data))
    }

    static func compute(_ md: OpaquePointer?, key: [UInt8], data: [UInt8], size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var written: UInt32 = 0
        // An empty key is legal HMAC; hand OpenSSL a valid pointer anyway.
        let keyStorage = key.isEmpty ? [UInt8](repeating: 0, count: 1) : key
        let result = keyStorage.withUnsafeBufferPointer { k in
            data.withUnsafeBufferPointer { d in
                out.withUnsafeMutableBufferPointer { o in
                    COpenSSL.HMAC(md, k.baseAddress, Int32(key.count), d.baseAddress, d.count, o.baseAddress, &written)
                }
            }
        }
        // HMAC() only fails on allocation failure: no input reaches it.
        precondition(result != nil && Int(written) == size, "HMAC failed")
        return out
    }
}
