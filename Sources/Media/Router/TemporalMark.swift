/// What a consumer needs of a video packet to leave out the temporal layers its subscriber does not take: the
/// packet's layer (VP8's TID, 0 the base) and whether it starts a frame. `none` for a packet without one (audio,
/// H.264, VP8 sent without temporal layers).
struct TemporalMark {
    var layer: UInt8
    var frameStart: Bool

    static let none = TemporalMark(layer: .max, frameStart: false)
}
