/// A memoryless soft limiter from a wide sum to Int16: linear up to the knee, then a curve that
/// approaches full scale asymptotically, so loud sums bend instead of wrapping or hard clipping.
///
/// Above the knee T (with headroom R = 32767 − T) an excess d maps to T + R·d / (d + R): slope 1 at
/// the knee, never reaching ±32767 for any finite input.
public enum SoftLimiter {
    /// The knee: about −2.5 dBFS.
    public static let knee: Int64 = 24_576
    static let headroom: Int64 = 32_767 - knee

    public static func limit(_ x: Int32) -> Int16 {
        let v = Int64(x)
        let magnitude = v < 0 ? -v : v
        if magnitude <= knee { return Int16(v) }
        let d = magnitude - knee
        let y = knee + headroom * d / (d + headroom)
        return Int16(v < 0 ? -y : y)
    }
}
