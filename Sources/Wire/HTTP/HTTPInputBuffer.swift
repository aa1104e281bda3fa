/// The bytes a parser has received but not yet consumed, with CRLF line scanning that
/// never looks at the same byte twice while a line is incomplete.
struct HTTPInputBuffer: Sendable {
    private(set) var bytes: [UInt8] = []
    private(set) var readIndex = 0
    /// Where the search for the next LF resumes; everything in readIndex..<scanIndex has no LF.
    private var scanIndex = 0

    var count: Int { bytes.count - readIndex }
    var isEmpty: Bool { readIndex == bytes.count }

    mutating func append(contentsOf newBytes: some Collection<UInt8>) {
        compact()
        bytes.append(contentsOf: newBytes)
    }

    mutating func append(_ newBytes: UnsafeRawBufferPointer) {
        compact()
        bytes.append(contentsOf: newBytes)
    }

    /// Drops consumed bytes once they dominate, keeping appends amortized O(1).
    private mutating func compact() {
        if readIndex == bytes.count {
            bytes.removeAll(keepingCapacity: true)
            readIndex = 0
            scanIndex = 0
        } else if readIndex >= 4096 && readIndex * 2 >= bytes.count {
            bytes.removeSubrange(0..<readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
    }

    enum Line {
        case line(ArraySlice<UInt8>)
        case needMore
        case tooLong
    }

    /// The next CRLF-terminated line without its CRLF, consumed.
    ///
    /// A bare LF is rejected rather than tolerated (RFC 9112 section 2.2 allows either):
    /// accepting it is a classic request-smuggling disagreement between proxies and servers.
    /// `maxLength` excludes the CRLF; `.tooLong` is reported as soon as it cannot fit.
    mutating func readLine(maxLength: Int) throws(HTTPParseError) -> Line {
        let end = bytes.count
        if let lfIndex = bytes[scanIndex..<end].firstIndex(of: HTTPSyntax.lf) {
            // Same verdict as when the line arrives in pieces and overflows before its LF.
            if lfIndex - readIndex > maxLength + 1 { return .tooLong }
            guard lfIndex > readIndex, bytes[lfIndex - 1] == HTTPSyntax.cr else {
                throw .badRequest(.invalidLineEnding, "line ends with a bare LF")
            }
            let line = bytes[readIndex..<(lfIndex - 1)]
            guard line.count <= maxLength else { return .tooLong }
            readIndex = lfIndex + 1
            scanIndex = readIndex
            return .line(line)
        }
        scanIndex = end
        // The pending bytes may include a final CR, hence the + 1.
        return end - readIndex > maxLength + 1 ? .tooLong : .needMore
    }

    /// Up to `limit` bytes, consumed.
    mutating func take(upTo limit: Int) -> [UInt8] {
        let n = min(limit, count)
        let result = Array(bytes[readIndex..<(readIndex + n)])
        readIndex += n
        scanIndex = max(scanIndex, readIndex)
        return result
    }

    /// Consumes `n` bytes (at most what is buffered).
    mutating func skip(_ n: Int) {
        readIndex += min(n, count)
        scanIndex = max(scanIndex, readIndex)
    }

    /// Consumes an exact CRLF; nil if fewer than two bytes are buffered.
    mutating func takeCRLF() -> Bool? {
        guard count >= 2 else { return nil }
        let ok = bytes[readIndex] == HTTPSyntax.cr && bytes[readIndex + 1] == HTTPSyntax.lf
        if ok {
            readIndex += 2
            scanIndex = max(scanIndex, readIndex)
        }
        return ok
    }

    /// Every unconsumed byte, consumed; used when a connection switches protocols.
    mutating func takeAll() -> [UInt8] {
        let result = Array(bytes[readIndex...])
        bytes.removeAll(keepingCapacity: false)
        readIndex = 0
        scanIndex = 0
        return result
    }
}
