import Foundation
import Testing
@testable import Platform

@Suite("API timestamps")
struct TimestampTests {
    @Test("RFC 3339 with milliseconds in UTC, the same text Foundation's formatter gives, across leap years, centuries and 1970")
    func matchesFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        var millis: [Int64] = [0, 1, 999, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_123, 4_102_444_800_000, 1_796_000_000_000,
                               -1, -86_400_000, -2_208_988_800_000]
        var x: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0..<2000 {
            x = x &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            millis.append(Int64(x % 7_258_118_400_000))  // 1970 to 2200
        }
        for ms in millis {
            let date = Date(millis: ms)
            #expect(date.iso8601 == formatter.string(from: date), "\(ms)")
        }
        #expect(Date(millis: 1_796_136_727_106).iso8601 == "2026-12-01T14:52:07.106Z")
    }
}
