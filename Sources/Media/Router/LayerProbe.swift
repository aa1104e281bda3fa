/// When a simulcast subscriber whose link holds it below the layer it wants tries the next layer up (pure:
/// fed the time and the subscriber's receive-side estimate).
///
/// A receiver's estimate (REMB) grows to at most about 1.5 × what it receives, so one held to a small layer
/// can never show, by its estimate alone, that a larger one would fit. After `hold` the next layer up is sent
/// for `window`: if the estimate grows to afford it, it stays; if not, or if the estimate falls by over 15 %
/// meanwhile (the link overused), the subscriber goes back to the layer it had before the probe (the estimate's
/// fall is the probe's own doing; a link that stays short moves it down as any other would) and the hold
/// doubles, up to `maximumHold`. A probe that succeeds brings the hold back to `minimumHold`.
struct LayerProbe: Equatable {
    /// The layer being tried (an index into the track's layers), nil between probes.
    private(set) var layer: Int?
    /// The layer held when the probe began.
    private(set) var base: Int?
    private var until: UInt64 = 0
    private var startEstimate: UInt64 = 0
    private var nextAt: UInt64 = 0
    private(set) var hold = LayerProbe.minimumHold

    static let minimumHold: UInt64 = 5_000_000_000
    static let maximumHold: UInt64 = 60_000_000_000
    static let window: UInt64 = 8_000_000_000

    /// The layer to send: `fitting` (what the estimate affords), or one step up from it toward `wanted` while a
    /// probe runs, or the probe's `base` when one fails. `stepUp` is the next larger live layer above `fitting`.
    mutating func decide(fitting: Int, wanted: Int, stepUp: Int?, estimate: UInt64, affords: (Int) -> Bool, now: UInt64) -> Int {
        if let probed = layer {
            let overused = estimate < startEstimate - startEstimate / 100 * 15
            if !overused, now < until { return probed }
            let succeeded = !overused && affords(probed)
            hold = succeeded ? Self.minimumHold : min(hold * 2, Self.maximumHold)
            nextAt = now &+ hold
            layer = nil
            defer { base = nil }
            return succeeded ? fitting : base ?? fitting
        }
        guard fitting != wanted, let stepUp, now >= nextAt else { return fitting }
        layer = stepUp
        base = fitting
        until = now &+ Self.window
        startEstimate = estimate
        return stepUp
    }

    /// The link no longer holds the subscriber back (no estimate, or it affords what it wants): no probe runs.
    mutating func reset() {
        layer = nil
        base = nil
    }
}
