/// Big-endian loads and stores shared by the STUN, RTP and RTCP codecs.
///
/// Every accessor is bounds-checked by its caller before use; these only keep the
/// shifting in one place. Network byte order is big-endian (RFC 1700).
enum PacketBytes {
    @inline(__always)
    static func u16(_ b: UnsafeRawBufferPointer, _ o: Int) -> UInt16 {
        UInt16(b[o]) << 8 | UInt16(b[o + 1])
    }

    @inline(__always)
    static func u24(_ b: UnsafeRawBufferPointer, _ o: Int) -> UInt32 {
        UInt32(b[o]) << 16 | UInt32(b[o + 1]) << 8 | UInt32(b[o + 2])
    }

    @inline(__always)
    static func u32(_ b: UnsafeRawBufferPointer, _ o: Int) -> UInt32 {
        UInt32(b[o]) << 24 | UInt32(b[o + 1]) << 16 | UInt32(b[o + 2]) << 8 | UInt32(b[o + 3])
    }

    @inline(__always)
    static func u64(_ b: UnsafeRawBufferPointer, _ o: Int) -> UInt64 {
        UInt64(u32(b, o)) << 32 | UInt64(u32(b, o + 4))
    }

    @inline(__always)
    static func put16(_ b: UnsafeMutableRawBufferPointer, _ o: Int, _ v: UInt16) {
        b[o] = UInt8(truncatingIfNeeded: v >> 8)
        b[o + 1] = UInt8(truncatingIfNeeded: v)
    }

    @inline(__always)
    static func put24(_ b: UnsafeMutableRawBufferPointer, _ o: Int, _ v: UInt32) {
        b[o] = UInt8(truncatingIfNeeded: v >> 16)
        b[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
        b[o + 2] = UInt8(truncatingIfNeeded: v)
    }

    @inline(__always)
    static func put32(_ b: UnsafeMutableRawBufferPointer, _ o: Int, _ v: UInt32) {
        b[o] = UInt8(truncatingIfNeeded: v >> 24)
        b[o + 1] = UInt8(truncatingIfNeeded: v >> 16)
        b[o + 2] = UInt8(truncatingIfNeeded: v >> 8)
        b[o + 3] = UInt8(truncatingIfNeeded: v)
    }

    @inline(__always)
    static func append16(_ out: inout [UInt8], _ v: UInt16) {
        out.append(UInt8(truncatingIfNeeded: v >> 8))
        out.append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    static func append24(_ out: inout [UInt8], _ v: UInt32) {
        out.append(UInt8(truncatingIfNeeded: v >> 16))
        out.append(UInt8(truncatingIfNeeded: v >> 8))
        out.append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    static func append32(_ out: inout [UInt8], _ v: UInt32) {
        out.append(UInt8(truncatingIfNeeded: v >> 24))
        out.append(UInt8(truncatingIfNeeded: v >> 16))
        out.append(UInt8(truncatingIfNeeded: v >> 8))
        out.append(UInt8(truncatingIfNeeded: v))
    }

    @inline(__always)
    static func append64(_ out: inout [UInt8], _ v: UInt64) {
        append32(&out, UInt32(truncatingIfNeeded: v >> 32))
        append32(&out, UInt32(truncatingIfNeeded: v))
    }

    /// Writes a 16-bit value into an array at `o`, which must already exist.
    @inline(__always)
    static func set16(_ out: inout [UInt8], _ o: Int, _ v: UInt16) {
        out[o] = UInt8(truncatingIfNeeded: v >> 8)
        out[o + 1] = UInt8(truncatingIfNeeded: v)
    }

    /// Runs a typed-throwing parser over the bytes of an array or slice.
    @inline(__always)
    static func with<T, E: Error>(
        _ bytes: some ContiguousBytesView, _ body: (UnsafeRawBufferPointer) throws(E) -> T
    ) throws(E) -> T {
        let result: Result<T, E> = bytes.withRawBytes { raw in
            do throws(E) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }
}

/// Byte containers the codecs accept without copying.
public protocol ContiguousBytesView {
    /// Calls `body` with a view of the bytes.
    func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R
}

extension Array: ContiguousBytesView where Element == UInt8 {
    public func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(body) }
}

extension ArraySlice: ContiguousBytesView where Element == UInt8 {
    public func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { withUnsafeBytes(body) }
}

extension UnsafeRawBufferPointer: ContiguousBytesView {
    public func withRawBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R { body(self) }
}
