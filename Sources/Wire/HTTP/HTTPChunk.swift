/// Chunked transfer coding framing for bodies we send (RFC 9112 section 7.1).
public enum HTTPChunk {
    /// The last-chunk with no trailers: `0\r\n\r\n`.
    public static let terminal: [UInt8] = Array("0\r\n\r\n".utf8)

    /// `hex-size CRLF data CRLF`; empty input gives no bytes, because a zero-size chunk
    /// would end the body.
    public static func encode(_ bytes: some Collection<UInt8>) -> [UInt8] {
        var out: [UInt8] = []
        encode(bytes, into: &out)
        return out
    }

    /// Appends one chunk; see `encode(_:)`.
    public static func encode(_ bytes: some Collection<UInt8>, into buffer: inout [UInt8]) {
        let count = bytes.count
        guard count > 0 else { return }
        buffer.reserveCapacity(buffer.count + count + 20)
        buffer.append(contentsOf: String(count, radix: 16).utf8)
        buffer.append(HTTPSyntax.cr)
        buffer.append(HTTPSyntax.lf)
        buffer.append(contentsOf: bytes)
        buffer.append(HTTPSyntax.cr)
        buffer.append(HTTPSyntax.lf)
    }
}
