/// Rate-limits key frame requests toward one producer (PLI/FIR, RFC 4585 §6.3.1, RFC 5104 §4.3.1).
///
/// Many consumers joining or losing packets at once would otherwise flood the sender with
/// PLIs, and every key frame costs several times a delta frame. At most one request goes
/// out per `interval`; a request that arrives inside the window is remembered and sent
/// when the window ends (`due`), so nobody waits longer than one interval.
struct KeyframeRequestThrottle {
    let interval: UInt64
    private(set) var lastSent: UInt64?
    private(set) var pending = false

    init(interval: UInt64 = 500_000_000) { self.interval = interval }

    /// A consumer wants a key frame; true if the request should be sent now.
    mutating func request(now: UInt64) -> Bool {
        if let last = lastSent, now &- last < interval {
            pending = true
            return false
        }
        lastSent = now
        pending = false
        return true
    }

    /// True when a deferred request should be sent now (call from the periodic tick).
    mutating func due(now: UInt64) -> Bool {
        guard pending, let last = lastSent, now &- last >= interval else { return false }
        lastSent = now
        pending = false
        return true
    }

    /// A key frame arrived: deferred requests are satisfied.
    mutating func keyframeReceived() { pending = false }
}
