/// Cuts the byte stream OpenSSL writes into a memory BIO back into UDP datagrams.
///
/// OpenSSL 3.0 has no datagram memory BIO: records written into a `BIO_s_mem` run together.
/// With a link MTU set (and MTU probing off) OpenSSL keeps every record within the MTU, so
/// splitting on record headers and packing whole records greedily gives datagrams that
/// never exceed the MTU and always start on a record boundary (RFC 6347 §4.1.1: a record
/// must not span datagrams; several records may share one).
///
///     0                   1                   2                   3
///     0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    |  ContentType  |    ProtocolVersion (2)        |  epoch (2) ...
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    ...            |          sequence_number (6)                  ...
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
///    ...            |          length (2)           |  fragment ...
///    +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
enum DTLSRecordPacker {
    /// DTLS 1.2 record header length (RFC 6347 §4.1).
    static let headerLength = 13

    /// Splits `bytes` into datagrams of whole records, each at most `mtu` bytes unless a single
    /// record is larger (then it travels alone). A truncated tail, which OpenSSL never writes,
    /// is sent as its own datagram rather than dropped silently.
    static func datagrams(from bytes: [UInt8], mtu: Int) -> [[UInt8]] {
        var result: [[UInt8]] = []
        var datagramStart = 0
        var offset = 0
        while offset < bytes.count {
            guard let length = recordLength(in: bytes, at: offset) else {
                if offset > datagramStart { result.append(Array(bytes[datagramStart..<offset])) }
                result.append(Array(bytes[offset...]))
                return result
            }
            if offset > datagramStart && offset + length - datagramStart > mtu {
                result.append(Array(bytes[datagramStart..<offset]))
                datagramStart = offset
            }
            offset += length
        }
        if offset > datagramStart { result.append(Array(bytes[datagramStart..<offset])) }
        return result
    }

    /// Total length (header + fragment) of the record starting at `offset`, or nil if the
    /// header or fragment runs past the end.
    static func recordLength(in bytes: [UInt8], at offset: Int) -> Int? {
        guard bytes.count - offset >= headerLength else { return nil }
        let fragment = Int(bytes[offset + 11]) << 8 | Int(bytes[offset + 12])
        let total = headerLength + fragment
        guard bytes.count - offset >= total else { return nil }
        return total
    }
}
