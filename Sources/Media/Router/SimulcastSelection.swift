/// Which layer of a simulcast track a subscriber gets (pure: what the consumer's timer applies).
///
/// Only layers the publisher is sending count (a browser stops a layer its bandwidth or CPU cannot
/// afford, or one the application turned off). Among them the subscriber wants, with a preferred picture
/// size, the smallest layer at least that wide and that high, else the largest; with none, the largest.
/// Layers are ranked by the picture size their key frames declare (VP8) when every live layer's is
/// known, otherwise in the offer's order, lowest first (the order browsers list their encodings in).
/// With a budget (the subscriber's link), it gets the largest layer up to the one it wants whose bitrate
/// fits — the layer it has now with a quarter to spare (a receiver's estimate lags a sender's rise, and a
/// bitrate wavering at the edge must not make it change back and forth) — or the smallest live layer when none
/// fits; `LayerProbe` tries larger ones.
enum SimulcastSelection {
    struct Layer: Equatable {
        var width: Int
        var height: Int
        var live: Bool
        /// Bits per second the publisher sends it at (0: not measured yet).
        var bitrate: UInt64 = 0
    }

    struct Ranked: Equatable {
        var index: Int
        var layer: Layer
        var rank: Int
    }

    /// The live layers, smallest first, each with its rank.
    static func ranked(_ layers: [Layer]) -> [Ranked] {
        let sized = layers.allSatisfy { !$0.live || ($0.width > 0 && $0.height > 0) }
        return layers.enumerated().filter { $0.element.live }
            .map { Ranked(index: $0.offset, layer: $0.element, rank: sized ? $0.element.width * $0.element.height : $0.offset) }
            .sorted { $0.rank < $1.rank }
    }

    /// The layer the subscriber's preference asks for (nil when none is live).
    static func wanted(_ ranked: [Ranked], preferredWidth: Int, preferredHeight: Int) -> Ranked? {
        let sized = ranked.allSatisfy { $0.layer.width > 0 && $0.layer.height > 0 }
        if sized, preferredWidth > 0 || preferredHeight > 0,
           let fit = ranked.first(where: { $0.layer.width >= preferredWidth && $0.layer.height >= preferredHeight }) {
            return fit
        }
        return ranked.last
    }

    /// The largest layer up to `wanted` whose bitrate fits in `budget` (`current`'s with a quarter to spare), else the smallest.
    static func fitting(_ ranked: [Ranked], upTo wanted: Ranked, budget: UInt64, current: Int?) -> Ranked {
        ranked.last { $0.rank <= wanted.rank && $0.layer.bitrate <= ( $0.index == current ? budget + budget / 4 : budget) }
            ?? ranked.first ?? wanted
    }

    /// The chosen layer's index with no probing (nil when no layer is live): `wanted`, or with a budget `fitting`.
    static func choose(_ layers: [Layer], preferredWidth: Int, preferredHeight: Int, budget: UInt64? = nil, current: Int? = nil) -> Int? {
        let ranked = ranked(layers)
        guard let wanted = wanted(ranked, preferredWidth: preferredWidth, preferredHeight: preferredHeight) else { return nil }
        guard let budget else { return wanted.index }
        return fitting(ranked, upTo: wanted, budget: budget, current: current).index
    }

    /// Which layers (by index) some subscriber may take, for a publisher to send, the others to be paused: with
    /// `everything` (a subscriber asking for the largest, a recorder's tap) or any layer's size not known yet, all
    /// of them; otherwise those up to the largest any preference asks for (`wanted` as if every layer were live), or
    /// with no subscriber the smallest alone (a newcomer starts on it while its own size resumes). A subscriber's
    /// link does not count: it may grow into the size it prefers, which `LayerProbe` needs sent to try.
    static func needed(_ layers: [Layer], preferences: [(width: Int, height: Int)], everything: Bool) -> [Bool] {
        let all = layers.map { Layer(width: $0.width, height: $0.height, live: true) }
        let ranked = ranked(all)
        guard !everything, ranked.allSatisfy({ $0.layer.width > 0 && $0.layer.height > 0 }), let smallest = ranked.first else {
            return layers.map { _ in true }
        }
        var top = smallest.rank
        for preference in preferences {
            if let wanted = wanted(ranked, preferredWidth: preference.width, preferredHeight: preference.height) { top = max(top, wanted.rank) }
        }
        var needed = layers.map { _ in false }
        for layer in ranked where layer.rank <= top { needed[layer.index] = true }
        return needed
    }

    /// How long no subscriber must have needed a layer before its publisher is asked to pause it (a subscriber
    /// changing its mind, or one leaving as another joins, does not make the publisher's encoder stop and start).
    static let unusedDelay: UInt64 = 3_000_000_000

    /// The highest temporal layer a subscriber preferring `preferred` frames per second takes (`.max`: all): the fewest
    /// layers whose frame rates add up to it, within a tenth (a measured 7.3 serves a preferred 7.5), else all of them.
    /// `frameRates` are each layer's own, base first; a stream without temporal layers has none above 0.
    static func temporalLayer(frameRates: [Double], preferred: Double) -> UInt8 {
        guard preferred > 0 else { return .max }
        var total = 0.0
        for (layer, rate) in frameRates.enumerated() where rate > 0 {
            total += rate
            if total >= preferred * 0.9 { return UInt8(layer) }
        }
        return .max
    }

    /// The temporal layers a consumer sends from the frame `frame` starts on, sending up to `sending` before it and
    /// asked for up to `target`: fewer from any frame; more from a key frame (all it is asked for), or one layer at a
    /// time from a frame of the next layer that depends on base layer frames only (VP8's Y bit) — that layer's later
    /// frames may refer to it, never to one left out before it, where a frame of another layer may (switched up at any
    /// base layer frame, a subscriber's decoder back to every frame showed one or two frames a second).
    static func temporalLayer(sending: UInt8, target: UInt8, at frame: TemporalMark, keyframe: Bool) -> UInt8 {
        if target < sending || keyframe { return target }
        if frame.layer > sending, frame.layer <= target, frame.sync { return frame.layer }
        return sending
    }

    /// A layer is live while its packets keep coming: a second without one (a camera at its
    /// slowest sends several frames a second) and it is taken as stopped.
    static let liveWindow: UInt64 = 1_000_000_000

    /// What a subscriber's audio takes of its link's estimate (Opus voice with its headers, rounded up).
    static let audioAllowance: UInt64 = 64_000

    /// How long the link must hold a subscriber below its layer before it moves down (not for a moment's dip).
    static let downgradeDelay: UInt64 = 1_000_000_000

    /// How often a subscriber's layer is chosen again.
    static let interval: UInt64 = 200_000_000
}
