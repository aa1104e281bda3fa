import Audio

/// Frames handed over by the control plane (speech, file playback, tones), played one per tick.
///
/// A ring of `capacity` frames allocated once; the producer side (`enqueue`, a mailbox job on the
/// worker thread) copies samples in and reports how much room is left, so the control plane paces
/// itself and memory stays bounded whatever the source's length.
final class FrameQueueMixerInput: MixerInput {
    let rate: SampleRate
    let capacity: Int
    private var ring: [Int16]
    private var head = 0
    private var count = 0
    /// Set by the control plane once the source has nothing more; `finished` when drained too.
    var ended = false
    private(set) var framesPlayed: UInt64 = 0

    var finished: Bool { ended && count == 0 }
    var space: Int { capacity - count }
    var queued: Int { count }

    init(rate: SampleRate, capacity: Int = 100) {
        self.rate = rate
        self.capacity = max(1, capacity)
        ring = [Int16](repeating: 0, count: self.capacity * rate.samplesPerFrame)
    }

    /// Copies whole frames from `samples` (mixer rate, mono) while there is room; returns how many.
    func enqueue(_ samples: [Int16]) -> Int {
        let n = rate.samplesPerFrame
        var taken = 0
        var offset = 0
        ring.withUnsafeMutableBufferPointer { dst in
            while offset + n <= samples.count, count < capacity {
                let slot = (head + count) % capacity
                for i in 0..<n { dst[slot * n + i] = samples[offset + i] }
                count += 1
                taken += 1
                offset += n
            }
        }
        return taken
    }

    /// Drops what is queued (a stop).
    func clear() {
        head = 0
        count = 0
    }

    func pull(into frame: inout AudioFrame, now: UInt64) -> Bool {
        guard count > 0 else { return false }
        let n = rate.samplesPerFrame
        let base = head * n
        ring.withUnsafeBufferPointer { src in
            frame.copy(from: UnsafeBufferPointer(rebasing: src[base..<base + n]))
        }
        head = (head + 1) % capacity
        count -= 1
        framesPlayed &+= 1
        return true
    }
}
