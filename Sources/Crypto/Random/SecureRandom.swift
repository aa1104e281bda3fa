/// Convenience front end to the system CSPRNG for code that has no injected source.
public enum SecureRandom {
    public static func bytes(_ count: Int) -> [UInt8] { SystemRandom().bytes(count) }

    /// Lower-case hex of `nBytes` random bytes.
    public static func hex(_ nBytes: Int) -> String { SystemRandom().hex(nBytes) }

    public static func uuid4() -> String { UUID4.generate() }
}
