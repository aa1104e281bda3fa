import Foundation

/// Wall-clock time, injected so tests can move it.
public protocol WallClock: Sendable {
    func now() -> Date
}

public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}

extension Date {
    /// Milliseconds since 1970, the store's time unit.
    var millis: Int64 { Int64((timeIntervalSince1970 * 1000).rounded()) }
    init(millis: Int64) { self.init(timeIntervalSince1970: Double(millis) / 1000) }

    /// RFC 3339 with milliseconds, UTC: the timestamp format of the API.
    public var iso8601: String {
        ISO8601DateFormatter.string(from: self, timeZone: .gmt, formatOptions: [.withInternetDateTime, .withFractionalSeconds])
    }
}
