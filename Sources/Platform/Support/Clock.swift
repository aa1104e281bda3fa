import Foundation
import Synchronization

/// Wall-clock time, injected so tests can move it.
public protocol WallClock: Sendable {
    func now() -> Date
}

public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

/// The system clock moved by an offset that can change while the server runs, as an NTP step or a
/// restored VM moves it. Development mode only (`PUT /test/clock`): the fault tests jump the clock the
/// server judges tokens by while the monotonic clocks of its timers keep going.
public final class ShiftedClock: WallClock {
    private let offsetMilliseconds = Atomic<Int64>(0)
    public init() {}
    public func now() -> Date { Date(timeIntervalSinceNow: Double(offsetMilliseconds.load(ordering: .relaxed)) / 1000) }
    public var offset: TimeInterval { Double(offsetMilliseconds.load(ordering: .relaxed)) / 1000 }
    public func shift(to offset: TimeInterval) { offsetMilliseconds.store(Int64((offset * 1000).rounded()), ordering: .relaxed) }
}

extension Date {
    /// Milliseconds since 1970, the store's time unit.
    var millis: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
    init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }

    /// RFC 3339 with milliseconds, UTC: the timestamp format of the API (`2026-12-01T14:32:07.106Z`).
    /// Computed directly (days to a civil date, after Hinnant's algorithm): every event and webhook carries
    /// timestamps, and a Foundation formatter per call cost a sixth of a voice call's server CPU.
    public var iso8601: String {
        let ms = millis
        let days = ms >= 0 ? ms / 86_400_000 : (ms - 86_399_999) / 86_400_000
        let inDay = ms - days * 86_400_000
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        func pad(_ v: Int64, _ width: Int) -> String {
            let digits = String(v)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(inDay / 3_600_000, 2)):\(pad(inDay / 60_000 % 60, 2)):"
            + "\(pad(inDay / 1000 % 60, 2)).\(pad(inDay % 1000, 3))Z"
    }
}
