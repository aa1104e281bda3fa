import Wire
import COpenSSL

/// Where engines get their randomness, so tests can substitute a deterministic source.
public protocol RandomSource: Sendable {
    /// Fills `buffer` completely with random bytes.
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

extension RandomSource {
    public func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: max(0, count))
        out.withUnsafeMutableBytes { fill($0) }
        return out
    }

    /// Lower-case hex of `nBytes` random bytes (the string is twice as long).
    public func hex(_ nBytes: Int) -> String { Hex.encode(bytes(nBytes)) }

    public func next<T: FixedWidthInteger & UnsignedInteger>(_ type: T.Type = T.self) -> T {
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { fill($0) }
        return value
    }

    /// A uniformly distributed value in `0..<upperBound` (no modulo bias).
    public func uniform(below upperBound: UInt64) -> UInt64 {
        precondition(upperBound > 0, "empty range")
        var generator = RandomSourceGenerator(source: self)
        return UInt64.random(in: 0..<upperBound, using: &generator)
    }
}

/// Adapts a `RandomSource` to the standard library's `RandomNumberGenerator`
/// (for `shuffled(using:)`, `Int.random(in:using:)`).
public struct RandomSourceGenerator<Source: RandomSource>: RandomNumberGenerator {
    public let source: Source
    public init(source: Source) { self.source = source }
    public mutating func next() -> UInt64 { source.next(UInt64.self) }
}

/// The operating system's CSPRNG through OpenSSL's DRBG.
public struct SystemRandom: RandomSource {
    public init() {}

    public func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        var offset = 0
        while offset < buffer.count {
            let chunk = min(buffer.count - offset, Int(Int32.max))
            let ok = RAND_bytes(base.advanced(by: offset).assumingMemoryBound(to: UInt8.self), Int32(chunk))
            // A failing DRBG means the process cannot make keys or tokens safely; stopping is the only safe move.
            precondition(ok == 1, "RAND_bytes failed")
            offset += chunk
        }
    }
}
