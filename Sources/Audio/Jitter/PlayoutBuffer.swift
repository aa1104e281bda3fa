/// What a WebSocket's far end sends to be heard (the API's `WebSocketLine`), as the Voice API's WebSocket endpoint
/// takes it: 20 ms frames at the far end's rate, played in order one a tick, however fast they came. A
/// bot may send a whole reply at once; up to `capacity` frames (about a minute) wait, and a frame beyond
/// that is dropped (`dropped`), never one already waiting, so what plays stays in order.
///
/// - Playing starts once `cushion + 1` frames wait, or the first has waited `cushion` ticks (a lone last frame
///   is not held back). The cushion starts at one frame and grows by one, up to `maxCushion`, each time the
///   buffer ran dry while playing and the next frame came within `maxCushion` ticks (it came late: a far end
///   streaming in real time over a jittery network or a loaded host); a longer gap is the far end pausing.
///   It shrinks by one after `shrinkAfter` ticks in a row played with a frame to spare. Nothing is trimmed:
///   unlike a phone's queue (the API's `LineQueue`), the far end decides the delay, and a reply sent ahead is
///   meant to be heard whole.
/// - A mark (`notify`) sits after the frames sent before it and is reached once they have all played; a
///   mark with nothing ahead of it is reached at the next tick.
/// - `clear()` discards the frames waiting and the marks behind them.
/// - At most `markCapacity` marks wait; a mark beyond them is dropped (`droppedMarks`), so a far end that
///   sends marks endlessly holds no more memory than one that sends audio.
///
/// Its ring starts at two seconds and doubles as a far end gets further ahead, up to `capacity`: the
/// buffer grows only while a far end sends faster than real time, not per frame.
public struct PlayoutBuffer<Mark> {
    /// Frames that may wait: 3,072 (61.44 s), as many as the Voice API's WebSocket endpoint buffers.
    public static var capacity: Int { 3072 }
    /// Marks that may wait.
    public static var markCapacity: Int { 1024 }
    /// The most frames of cushion against a late far end (120 ms).
    public static var maxCushion: Int { 6 }
    /// Ticks in a row, each with a frame to spare, after which the cushion shrinks by one (30 s).
    public static var shrinkAfter: Int { 1500 }
    private static var initialFrames: Int { 100 }
    /// Samples per frame at the far end's rate.
    public let samples: Int
    private var ring: [Int16]
    private var slots: Int
    private var head = 0
    public private(set) var count = 0
    private var playing = false
    /// Ticks the frames have waited while not playing.
    private var waited = 0
    /// Frames kept in reserve when playing starts.
    public private(set) var cushion = 1
    /// Ran dry while playing, and the ticks since (a frame within `maxCushion` of them came late).
    private var wentDry = false
    private var dryTicks = 0
    /// Ticks in a row played with a frame to spare.
    private var calm = 0
    /// Times the buffer ran dry while playing and the next frame came late.
    public private(set) var underruns = 0
    /// Frames written and played since the start; a mark is reached when `played` gets to its `at`.
    private var written = 0
    private var played = 0
    private var marks: [(at: Int, mark: Mark)] = []
    private var nextMark = 0
    /// Frames that came while `capacity` frames waited.
    public private(set) var dropped = 0
    /// Marks that came while `markCapacity` marks waited.
    public private(set) var droppedMarks = 0

    public init(rate: SampleRate) {
        samples = rate.samplesPerFrame
        slots = Self.initialFrames
        ring = [Int16](repeating: 0, count: slots * samples)
    }

    /// Queues one frame (`samples` of them); false when it is dropped.
    @discardableResult
    public mutating func push(_ frame: UnsafeBufferPointer<Int16>) -> Bool {
        guard frame.count == samples else { return false }
        guard count < Self.capacity else {
            dropped += 1
            return false
        }
        if wentDry {
            wentDry = false
            if dryTicks <= Self.maxCushion {
                underruns += 1
                cushion = min(cushion + 1, Self.maxCushion)
            }
        }
        if count == slots { grow() }
        let n = samples
        let base = (head + count) % slots * n
        ring.withUnsafeMutableBufferPointer { dst in
            for i in 0..<n { dst[base + i] = frame[i] }
        }
        count += 1
        written += 1
        return true
    }

    /// A mark after every frame pushed so far; false when it is dropped.
    @discardableResult
    public mutating func mark(_ mark: Mark) -> Bool {
        guard marks.count - nextMark < Self.markCapacity else {
            droppedMarks += 1
            return false
        }
        marks.append((written, mark))
        return true
    }

    /// Discards the frames waiting and the marks behind them; how many frames it discarded.
    @discardableResult
    public mutating func clear() -> Int {
        let discarded = count
        played += count
        count = 0
        head = 0
        playing = false
        waited = 0
        wentDry = false
        marks.removeSubrange(nextMark...)
        return discarded
    }

    /// One tick: the next frame into `frame` (false when there is none to play), then each mark its
    /// frames have reached, in order.
    public mutating func pull(into frame: inout AudioFrame, reached: (Mark) -> Void) -> Bool {
        let pulled = take(into: &frame)
        while nextMark < marks.count, marks[nextMark].at <= played {
            reached(marks[nextMark].mark)
            nextMark += 1
        }
        if nextMark == marks.count, nextMark > 0 {
            marks.removeAll(keepingCapacity: true)
            nextMark = 0
        }
        return pulled
    }

    private mutating func take(into frame: inout AudioFrame) -> Bool {
        guard frame.count == samples, count > 0 else {
            if playing {
                wentDry = true
                dryTicks = 0
                calm = 0
            }
            dryTicks += 1
            playing = false
            waited = 0
            return false
        }
        if !playing {
            waited += 1
            guard count > cushion || waited > cushion else { return false }
            playing = true
        }
        calm = count > 1 ? calm + 1 : 0
        if calm >= Self.shrinkAfter {
            calm = 0
            cushion = max(1, cushion - 1)
        }
        let n = samples
        let base = head * n
        ring.withUnsafeBufferPointer { src in frame.copy(from: UnsafeBufferPointer(rebasing: src[base..<base + n])) }
        head = (head + 1) % slots
        count -= 1
        played += 1
        return true
    }

    /// Doubles the ring (up to `capacity` frames), the waiting frames first in order.
    private mutating func grow() {
        let bigger = min(slots * 2, Self.capacity)
        var next = [Int16](repeating: 0, count: bigger * samples)
        let n = samples
        ring.withUnsafeBufferPointer { src in
            next.withUnsafeMutableBufferPointer { dst in
                for k in 0..<count {
                    let from = (head + k) % slots * n
                    for i in 0..<n { dst[k * n + i] = src[from + i] }
                }
            }
        }
        ring = next
        slots = bigger
        head = 0
    }
}
