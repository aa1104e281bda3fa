import Wire
import COpenSSL
import Foundation

/// Reads and clears OpenSSL's thread-local error queue so a failure in one call
/// never shows up as the reason for a later one.
enum OpenSSLError {
    static func drain() -> String {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buf = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buf, buf.count)
            messages.append(String(decoding: buf.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages.isEmpty ? "unknown OpenSSL error" : messages.joined(separator: "; ")
    }
}

/// Memory-BIO plumbing for PEM in and out.
enum MemoryBIO {
    static func withReadable<T>(_ bytes: [UInt8], _ body: (OpaquePointer) -> T?) -> T? {
        bytes.withUnsafeBytes { raw -> T? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return body(bio)
        }
    }

    static func collect(_ write: (OpaquePointer) -> Bool) -> [UInt8]? {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        defer { BIO_free(bio) }
        guard write(bio) else { return nil }
        let pending = Int(BIO_ctrl_pending(bio))
        var out = [UInt8](repeating: 0, count: pending)
        let n = out.withUnsafeMutableBytes { BIO_read(bio, $0.baseAddress, Int32(pending)) }
        guard n == pending else { return nil }
        return out
    }
}

/// A PEM block (RFC 7468): the label between the dashes and the decoded body.
struct PEMBlock {
    var label: String
    var der: [UInt8]

    /// Finds the first `-----BEGIN label-----` ... `-----END label-----` block.
    static func parse(_ text: String) -> PEMBlock? {
        guard let begin = text.range(of: "-----BEGIN ") else { return nil }
        guard let labelEnd = text.range(of: "-----", range: begin.upperBound..<text.endIndex) else { return nil }
        let label = String(text[begin.upperBound..<labelEnd.lowerBound])
        guard let end = text.range(of: "-----END \(label)-----", range: labelEnd.upperBound..<text.endIndex) else {
            return nil
        }
        let body = String(text[labelEnd.upperBound..<end.lowerBound])
        guard !body.contains(":"), let der = Base64.decode(body, ignoringWhitespace: true), !der.isEmpty else {
            return nil  // encrypted (Proc-Type headers) or corrupt
        }
        return PEMBlock(label: label, der: der)
    }

    static func encode(label: String, der: [UInt8]) -> String {
        let b64 = Array(Base64.encode(der))
        var out = "-----BEGIN \(label)-----\n"
        var i = 0
        while i < b64.count {
            out += String(b64[i..<min(i + 64, b64.count)]) + "\n"
            i += 64
        }
        return out + "-----END \(label)-----\n"
    }
}
