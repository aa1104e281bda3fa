import COpenSSL

/// One-shot EVP digest shared by the hash front ends.
enum Digest {
    static func compute(_ md: OpaquePointer?, _ input: UnsafeRawBufferPointer, size: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: size)
        var written: UInt32 = 0
        let ok = out.withUnsafeMutableBufferPointer { outBuf in
            EVP_Digest(input.baseAddress, input.count, outBuf.baseAddress, &written, md, nil)
        }
        // EVP_Digest only fails on allocation failure or a missing provider: no input reaches it.
        precondition(ok == 1 && Int(written) == size, "EVP_Digest failed")
        return out
    }
}
