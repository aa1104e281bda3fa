/// Which layer of a simulcast track a subscriber gets (pure: what the consumer's timer applies).
///
/// Only layers the publisher is sending count (a browser stops a layer its bandwidth or CPU cannot
/// afford, or one the application turned off). Among them: with a preferred picture size, the
/// smallest layer at least that wide and that high, else the largest; with none, the largest.
/// Layers are ranked by the picture size their key frames declare (VP8) when every live layer's is
/// known, otherwise in the offer's order, lowest first (the order browsers list their encodings in).
enum SimulcastSelection {
    struct Layer: Equatable {
        var width: Int
        var height: Int
        var live: Bool
    }

    /// The chosen layer's index, or nil when no layer is live.
    static func choose(_ layers: some Collection<Layer>, preferredWidth: Int, preferredHeight: Int) -> Int? {
        var sized = true
        var anyLive = false
        for layer in layers where layer.live {
            anyLive = true
            if layer.width == 0 || layer.height == 0 { sized = false }
        }
        guard anyLive else { return nil }
        var largest: Int?
        var fit: Int?
        var largestRank = -1
        var fitRank = Int.max
        for (index, layer) in layers.enumerated() where layer.live {
            let rank = sized ? layer.width * layer.height : index
            if rank > largestRank { (largest, largestRank) = (index, rank) }
            if sized, preferredWidth > 0 || preferredHeight > 0, layer.width >= preferredWidth, layer.height >= preferredHeight,
               rank < fitRank {
                (fit, fitRank) = (index, rank)
            }
        }
        return fit ?? largest
    }

    /// A layer is live while its packets keep coming: a second without one (a camera at its
    /// slowest sends several frames a second) and it is taken as stopped.
    static let liveWindow: UInt64 = 1_000_000_000

    /// How often a subscriber's layer is chosen again.
    static let interval: UInt64 = 200_000_000
}
