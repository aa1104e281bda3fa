import Audio

/// A copy of what a mixer produces, for recorders: the shared mix, or what one participant hears
/// (optionally with what it says on a second channel, "split"), one 20 ms frame per tick.
///
/// A ring of `capacity` frames allocated once; the tick copies into it (silence on idle ticks, so
/// the recording keeps wall-clock time) and the control plane drains it. When the control plane
/// falls behind, the newest frames are dropped and counted rather than growing memory.
final class MixerTap {
    let id: MixerTapID
    let participant: MixerParticipantID?
    /// The participant's slot; -1 for the shared mix, -2 once the participant has left (silence).
    var slot: Int
    let channels: Int
    let capacity: Int
    private let n: Int
    private var ring: [Int16]
    private var head = 0
    private var count = 0
    /// What the tapped participant said this tick (split only), filled from the input loop.
    private var spoken: [Int16]
    private var spokeThisTick = false
    private(set) var dropped: UInt64 = 0
    private(set) var captured: UInt64 = 0

    init(id: MixerTapID, participant: MixerParticipantID?, slot: Int, split: Bool, capacity: Int, rate: SampleRate) {
        self.id = id
        self.participant = participant
        self.slot = slot
        channels = split ? 2 : 1
        self.capacity = max(1, capacity)
        n = rate.samplesPerFrame
        ring = [Int16](repeating: 0, count: self.capacity * n * channels)
        spoken = [Int16](repeating: 0, count: split ? n : 0)
    }

    /// The tapped participant's input this tick (split taps keep it for the left channel).
    func noteInput(_ frame: AudioFrame) {
        guard channels == 2 else { return }
        spoken.withUnsafeMutableBufferPointer { dst in frame.withSamples { src in for i in 0..<n { dst[i] = src[i] } } }
        spokeThisTick = true
    }

    /// One tick's frame: `heard` (nil for silence) on the only channel, or interleaved after what
    /// was said when split.
    func capture(_ heard: AudioFrame?) {
        guard count < capacity else {
            dropped &+= 1
            spokeThisTick = false
            return
        }
        let base = ((head + count) % capacity) * n * channels
        let said = spokeThisTick
        ring.withUnsafeMutableBufferPointer { dst in
            spoken.withUnsafeBufferPointer { left in
                if let heard {
                    heard.withSamples { src in
                        if channels == 1 {
                            for i in 0..<n { dst[base + i] = src[i] }
                        } else {
                            for i in 0..<n {
                                dst[base + 2 * i] = said ? left[i] : 0
                                dst[base + 2 * i + 1] = src[i]
                            }
                        }
                    }
                } else {
                    for i in 0..<(n * channels) { dst[base + i] = 0 }
                    if channels == 2 && said { for i in 0..<n { dst[base + 2 * i] = left[i] } }
                }
            }
        }
        spokeThisTick = false
        count += 1
        captured &+= 1
    }

    /// Everything captured since the last drain (control path: allocates the result).
    func drain() -> [Int16] {
        var out: [Int16] = []
        out.reserveCapacity(count * n * channels)
        let frame = n * channels
        ring.withUnsafeBufferPointer { src in
            for k in 0..<count {
                let base = ((head + k) % capacity) * frame
                out.append(contentsOf: UnsafeBufferPointer(rebasing: src[base..<base + frame]))
            }
        }
        head = 0
        count = 0
        return out
    }
}
