import Foundation
import Platform
import Runtime
import Wire

/// Development mode only: the wall clock the server judges tokens by, moved as an NTP step would move it.
/// - `GET /test/clock` → `{"offset_seconds", "now"}`.
/// - `PUT /test/clock` — body `{"offset_seconds": N}` (|N| ≤ 10 years) → the same.
/// Timers (pings, login deadlines, retention, media) run on the monotonic clock and do not move.
struct ClockTestRoutes {
    let clock: ShiftedClock

    func register(on router: inout Router) {
        let clock = clock
        @Sendable func state() -> HTTPResponse {
            .jsonObject(["offset_seconds": clock.offset, "now": clock.now().iso8601])
        }
        router.get("/test/clock") { _ in state() }
        router.put("/test/clock", bodyLimit: 1024) { request in
            guard let offset = try request.json()["offset_seconds"]?.doubleValue, offset.isFinite,
                  abs(offset) <= 10 * 365 * 86_400 else {
                throw APIError.badRequest("Expected {\"offset_seconds\": N}, |N| up to ten years.")
            }
            clock.shift(to: offset)
            return state()
        }
    }
}
