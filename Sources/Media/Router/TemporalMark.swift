/// What a consumer needs of a video packet to leave out the temporal layers its subscriber does not take: the
/// packet's layer (VP8's TID, 0 the base), whether it starts a frame, and whether that frame depends on base layer
/// frames only (VP8's Y bit: a subscriber may start taking its layer there). `none` for a packet without one (audio,
/// H.264, VP8 sent without temporal layers).
struct TemporalMark {
    var layer: UInt8
    var frameStart: Bool
    var sync = false

    static let none = TemporalMark(layer: .max, frameStart: false)
}
