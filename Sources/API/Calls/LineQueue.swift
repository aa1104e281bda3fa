import Audio

/// What a line's far end said (a phone, a WebSocket), as frames at the far end's own rate waiting for the
/// mixer's ticks: a small adaptive jitter buffer. Allocated once; no allocation after. Frames wait at the
/// far end's rate (160 samples for a G.711 phone, not the mixer's 960): the line resamples only the frame a
/// tick takes, and never one that is trimmed or dropped.
///
/// - The far end's clock and the network decide when frames arrive; the mixer's tick decides when one
///   is taken. Mixing starts once `cushion + 1` frames wait (two at first), and again after the queue
///   ran dry, from the newest `cushion + 1` (older ones, queued before the line was mixed, are trimmed).
/// - Each time it runs dry and the next frame comes within `maxCushion` ticks (it came late: an underrun,
///   a gap the listeners hear; a longer silence is the far end pausing), the cushion grows by one frame,
///   up to `maxCushion`, so a far end that arrives in bursts gets the delay that absorbs
///   them. It shrinks by one only after `shrinkAfter` windows in a row without an underrun in which a
///   frame of it was never needed: probing for a lower delay costs a gap each time, so it is slow.
/// - The delay does not creep: a late frame is still played, which leaves one more frame waiting from
///   then on. When for `trimAfter` windows in a row more than `cushion + 1` frames waited at every tick,
///   the next quiet frame (peak below `quietPeak`, a pause in speech) due to be mixed is dropped instead
///   (`trimmed`): the delay comes back down where nobody hears it. A far end that never pauses loses a
///   loud frame only once `loudExcess` frames more than that waited for those windows.
/// - When the far end sends faster than anything can absorb (`capacity` frames wait), the oldest frame
///   goes (`dropped`).
/// - Frames discarded before the line was first mixed (said while the call was being connected to its
///   conversation: between a line's creation or move and its first tick) are counted apart (`unmixed`):
///   nobody in the conversation could have heard them, so they are not loss.
struct LineQueue {
    static let capacity = 12
    static let maxCushion = 6
    /// Ticks (1 s) over which the fewest frames waiting at a tick is watched.
    static let window = 50
    static let trimAfter = 3
    static let quietPeak: UInt16 = 1024
    static let loudExcess = 4
    static let shrinkAfter = 30
    /// Samples per frame at the far end's rate.
    let samples: Int
    private var ring: [Int16]
    /// Whether the frame in each slot is quiet.
    private var quiet = [Bool](repeating: false, count: LineQueue.capacity)
    private var head = 0
    private var count = 0
    private var primed = false
    /// Mixing has started at least once.
    private var mixed = false
    /// Frames kept in reserve against the far end's jitter.
    private(set) var cushion = 1
    /// The fewest frames that waited at a tick in this window, and the ticks so far in it.
    private var fewest = Int.max
    private var ticks = 0
    /// Ran dry after mixing had started, and the ticks since.
    private var wentDry = false
    private var dryTicks = 0
    /// Windows in a row with a frame to spare beyond the cushion, and without an underrun and a frame
    /// of the cushion unused.
    private var spareWindows = 0
    private var calmWindows = 0
    /// A frame is to be trimmed: the next quiet one due.
    private var trimDue = false
    /// Frames lost because the queue was full.
    private(set) var dropped = 0
    /// Frames dropped to bring a grown delay back down.
    private(set) var trimmed = 0
    /// Times the queue ran dry after mixing had started and the far end's next frame came within
    /// `maxCushion` ticks: late frames, each a gap the listeners hear.
    private(set) var underruns = 0
    /// Frames dropped or trimmed before mixing had ever started (not loss: see above).
    private(set) var unmixed = 0

    init(rate: SampleRate = .hz48000) {
        samples = rate.samplesPerFrame
        ring = [Int16](repeating: 0, count: LineQueue.capacity * samples)
    }

    mutating func push(_ frame: AudioFrame) {
        let n = samples
        guard frame.count == n else { return }
        if wentDry {
            // Back after running dry: a late frame (jitter) grows the cushion; a longer silence is a
            // pause in what the far end sends, not jitter.
            wentDry = false
            if dryTicks <= Self.maxCushion {
                underruns += 1
                cushion = min(cushion + 1, Self.maxCushion)
            }
        }
        if count == Self.capacity {
            discardOldest()
            if mixed { dropped += 1 } else { unmixed += 1 }
        }
        let slot = (head + count) % Self.capacity
        var peak: UInt16 = 0
        ring.withUnsafeMutableBufferPointer { dst in
            frame.withSamples { src in
                for i in 0..<n {
                    dst[slot * n + i] = src[i]
                    peak = max(peak, src[i].magnitude)
                }
            }
        }
        quiet[slot] = peak < Self.quietPeak
        count += 1
    }

    /// One tick: the oldest frame into `frame`, or false when there is nothing to mix yet.
    mutating func pull(into frame: inout AudioFrame) -> Bool {
        guard frame.count == samples else { return false }
        defer { endTick() }
        if !primed {
            if count == 0 { dryTicks &+= 1 }
            guard count > cushion else { return false }
            primed = true
            // More waiting than the cushion needs (the far end spoke before this line was in a mix, or a
            // burst came after it ran dry): stale; mixing starts from the newest.
            while count > cushion + 1 {
                discardOldest()
                if mixed { trimmed += 1 } else { unmixed += 1 }
            }
            mixed = true
        }
        guard count > 0 else {
            primed = false
            trimDue = false
            wentDry = true
            dryTicks = 1
            fewest = 0
            return false
        }
        fewest = min(fewest, count)
        if trimDue, count > 1, quiet[head] {
            discardOldest()
            trimmed += 1
            trimDue = false
        }
        let n = samples
        let base = head * n
        ring.withUnsafeBufferPointer { src in frame.copy(from: UnsafeBufferPointer(rebasing: src[base..<base + n])) }
        discardOldest()
        return true
    }

    /// Forgets the frames waiting (a new session); whether the line was ever mixed stays.
    mutating func reset() {
        count = 0
        primed = false
        wentDry = false
        trimDue = false
        fewest = Int.max
        ticks = 0
        spareWindows = 0
    }

    private mutating func discardOldest() {
        head = (head + 1) % Self.capacity
        count -= 1
    }

    private mutating func endTick() {
        ticks += 1
        guard ticks == Self.window else { return }
        let spare = primed && fewest != Int.max && fewest > cushion + 1
        spareWindows = spare ? spareWindows + 1 : 0
        if !spare { trimDue = false }
        if spareWindows >= Self.trimAfter {
            spareWindows = 0
            if fewest > cushion + 1 + Self.loudExcess {
                discardOldest()
                trimmed += 1
            } else {
                trimDue = true
            }
        }
        // A window in which the queue ran dry has `fewest` 0: not calm.
        calmWindows = fewest != Int.max && fewest >= 2 ? calmWindows + 1 : 0
        if calmWindows >= Self.shrinkAfter, cushion > 1 {
            cushion -= 1
            calmWindows = 0
        }
        fewest = Int.max
        ticks = 0
    }
}
