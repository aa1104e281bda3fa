/// Big-endian loads and stores on raw packet memory; callers check bounds first.
///
/// For packet paths that work on pointers into preallocated buffers rather than on `[UInt8]`
/// (the SFU worker, SRTP, the load generator); the codecs here use the bounds-checked
/// `PacketBytes`. Public and inlinable so that other modules inline them: a `package`
/// function is not inlined into another module, even when `@inlinable`.
public enum Bytes {
    @inlinable @inline(__always)
    public static func u16(_ p: UnsafeRawPointer, _ o: Int) -> UInt16 {
        UInt16(p.load(fromByteOffset: o, as: UInt8.self)) << 8 | UInt16(p.load(fromByteOffset: o + 1, as: UInt8.self))
    }

    @inlinable @inline(__always)
    public static func u32(_ p: UnsafeRawPointer, _ o: Int) -> UInt32 {
        UInt32(u16(p, o)) << 16 | UInt32(u16(p, o + 2))
    }

    @inlinable @inline(__always)
    public static func u64(_ p: UnsafeRawPointer, _ o: Int) -> UInt64 {
        UInt64(u32(p, o)) << 32 | UInt64(u32(p, o + 4))
    }

    @inlinable @inline(__always)
    public static func put16(_ p: UnsafeMutableRawPointer, _ o: Int, _ v: UInt16) {
        p.storeBytes(of: UInt8(truncatingIfNeeded: v >> 8), toByteOffset: o, as: UInt8.self)
        p.storeBytes(of: UInt8(truncatingIfNeeded: v), toByteOffset: o + 1, as: UInt8.self)
    }

    @inlinable @inline(__always)
    public static func put24(_ p: UnsafeMutableRawPointer, _ o: Int, _ v: UInt32) {
        setByte(p, o, UInt8(truncatingIfNeeded: v >> 16))
        put16(p, o + 1, UInt16(truncatingIfNeeded: v))
    }

    @inlinable @inline(__always)
    public static func put32(_ p: UnsafeMutableRawPointer, _ o: Int, _ v: UInt32) {
        put16(p, o, UInt16(truncatingIfNeeded: v >> 16))
        put16(p, o + 2, UInt16(truncatingIfNeeded: v))
    }

    @inlinable @inline(__always)
    public static func put64(_ p: UnsafeMutableRawPointer, _ o: Int, _ v: UInt64) {
        put32(p, o, UInt32(truncatingIfNeeded: v >> 32))
        put32(p, o + 4, UInt32(truncatingIfNeeded: v))
    }

    @inlinable @inline(__always)
    public static func byte(_ p: UnsafeRawPointer, _ o: Int) -> UInt8 { p.load(fromByteOffset: o, as: UInt8.self) }

    @inlinable @inline(__always)
    public static func setByte(_ p: UnsafeMutableRawPointer, _ o: Int, _ v: UInt8) { p.storeBytes(of: v, toByteOffset: o, as: UInt8.self) }
}
