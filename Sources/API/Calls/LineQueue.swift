import Audio

/// What a line's far end said (a phone, a WebSocket), as 48 kHz frames waiting for the mixer's ticks:
/// a few frames deep (a burst fits, little delay is added), primed with two frames before the first is
/// mixed and again after it ran dry (one frame of jitter absorbed). When the far end sends faster than
/// the mixer ticks (clock drift), the oldest frame goes. Allocated once; no allocation after.
struct LineQueue {
    static let capacity = 6
    static let prime = 2
    private static let samples = SampleRate.hz48000.samplesPerFrame

    private var ring = [Int16](repeating: 0, count: LineQueue.capacity * LineQueue.samples)
    private var head = 0
    private var count = 0
    private var primed = false
    private(set) var dropped = 0

    mutating func push(_ frame: AudioFrame) {
        let n = Self.samples
        guard frame.count == n else { return }
        if count == Self.capacity {
            head = (head + 1) % Self.capacity
            count -= 1
            dropped += 1
        }
        let slot = (head + count) % Self.capacity
        ring.withUnsafeMutableBufferPointer { dst in
            frame.withSamples { src in for i in 0..<n { dst[slot * n + i] = src[i] } }
        }
        count += 1
    }

    mutating func pull(into frame: inout AudioFrame) -> Bool {
        if !primed {
            guard count >= Self.prime else { return false }
            primed = true
        }
        guard count > 0, frame.count == Self.samples else {
            primed = false
            return false
        }
        let n = Self.samples
        let base = head * n
        ring.withUnsafeBufferPointer { src in frame.copy(from: UnsafeBufferPointer(rebasing: src[base..<base + n])) }
        head = (head + 1) % Self.capacity
        count -= 1
        return true
    }

    mutating func reset() {
        count = 0
        primed = false
    }
}
