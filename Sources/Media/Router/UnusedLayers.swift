/// The layers of a simulcast track its publisher is asked to pause: each one `SimulcastSelection.needed` has
/// left out for `SimulcastSelection.unusedDelay`, until it is needed again (at once). Pure: the track's transport
/// feeds it what is needed every `interval` and tells the control plane when the answer changes.
struct UnusedLayers {
    /// Per layer: since when it has not been needed (0: it is).
    private var since: [UInt64]
    private(set) var paused: [Bool]
    private var nextCheck: UInt64 = 0

    static let interval: UInt64 = 500_000_000

    init(count: Int) {
        since = [UInt64](repeating: 0, count: count)
        paused = [Bool](repeating: false, count: count)
    }

    /// Whether it is time to look again at what is needed.
    mutating func due(now: UInt64) -> Bool {
        guard now >= nextCheck else { return false }
        nextCheck = now &+ Self.interval
        return true
    }

    /// What is needed now; whether `paused` changed.
    mutating func update(needed: [Bool], now: UInt64) -> Bool {
        guard needed.count == since.count else { return false }
        var changed = false
        for i in needed.indices {
            if needed[i] {
                since[i] = 0
            } else if since[i] == 0 {
                since[i] = max(now, 1)
            }
            let pause = !needed[i] && now &- since[i] >= SimulcastSelection.unusedDelay
            if pause != paused[i] {
                paused[i] = pause
                changed = true
            }
        }
        return changed
    }
}
