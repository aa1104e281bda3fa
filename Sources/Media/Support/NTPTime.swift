import Glibc

/// Converts the monotonic packet clock to NTP time for RTCP sender reports (RFC 3550 §4).
///
/// Receivers only compare NTP values we sent with ones they echo back (LSR/DLSR) and use
/// them for lip sync, so a fixed wall-clock anchor taken once is enough.
struct NTPTime: Sendable {
    /// Wall-clock seconds since 1900 at monotonic `anchorNanoseconds`.
    let anchorNTP: UInt64
    let anchorNanoseconds: UInt64

    init(monotonicNow: UInt64) {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let unixNanos = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        anchorNTP = NTPTime.encode(nanosecondsSince1900: unixNanos + 2_208_988_800 * 1_000_000_000)
        anchorNanoseconds = monotonicNow
    }

    init(anchorNTP: UInt64, anchorNanoseconds: UInt64) {
        self.anchorNTP = anchorNTP
        self.anchorNanoseconds = anchorNanoseconds
    }

    /// 64-bit NTP (32.32 fixed point seconds).
    func ntp(at now: UInt64) -> UInt64 {
        let delta = now &- anchorNanoseconds
        return anchorNTP &+ NTPTime.encode(nanosecondsSince1900: delta)
    }

    /// The middle 32 bits used in LSR and for RTT (RFC 3550 §6.4.1).
    func compact(at now: UInt64) -> UInt32 { UInt32(truncatingIfNeeded: ntp(at: now) >> 16) }

    static func encode(nanosecondsSince1900 ns: UInt64) -> UInt64 {
        let seconds = ns / 1_000_000_000
        let fraction = ((ns % 1_000_000_000) << 32) / 1_000_000_000
        return seconds << 32 | fraction
    }

    /// Converts a compact NTP interval (16.16 seconds) to nanoseconds.
    static func compactToNanoseconds(_ value: UInt32) -> UInt64 {
        (UInt64(value) * 1_000_000_000) >> 16
    }
}
