import Audio

/// A copy of what a mixer produces, for recorders: the shared mix, or what one participant hears
/// (optionally with what it says on a second channel, "split"), or each speaker on a channel of its
/// own ("speakers"), one 20 ms frame per tick.
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
    /// One channel per speaker, in the order they are first heard (`participant` first), the rest of them
    /// added together on the last.
    let perSpeaker: Bool
    let capacity: Int
    private let n: Int
    private var ring: [Int16]
    private var head = 0
    private var count = 0
    /// What the tapped participant said this tick (split only), filled from the input loop.
    private var spoken: [Int16]
    private var spokeThisTick = false
    /// Per speaker: this tick's channels, summed; the channel each mixer slot speaks on (-1: none yet).
    private var speakers: [Int32]
    private var channelOf: [Int]
    private var nextChannel = 0
    private(set) var dropped: UInt64 = 0
    private(set) var captured: UInt64 = 0

    /// `speakerChannels` ≥ 2 lays the tap out one speaker per channel; `slots` is the mixer's capacity.
    init(id: MixerTapID, participant: MixerParticipantID?, slot: Int, split: Bool, speakerChannels: Int = 0, slots: Int = 0,
         capacity: Int, rate: SampleRate) {
        self.id = id
        self.participant = participant
        self.slot = slot
        perSpeaker = speakerChannels >= 2
        channels = perSpeaker ? speakerChannels : split ? 2 : 1
        self.capacity = max(1, capacity)
        n = rate.samplesPerFrame
        ring = [Int16](repeating: 0, count: self.capacity * n * channels)
        spoken = [Int16](repeating: 0, count: split && !perSpeaker ? n : 0)
        speakers = [Int32](repeating: 0, count: perSpeaker ? n * channels : 0)
        channelOf = [Int](repeating: -1, count: perSpeaker ? slots : 0)
        if perSpeaker, slot >= 0, slot < channelOf.count {
            channelOf[slot] = 0
            nextChannel = 1
        }
    }

    /// A participant's input this tick: split taps keep their participant's for the left channel,
    /// speaker taps add each speaker's to its channel.
    func noteInput(_ frame: AudioFrame, slot speaker: Int) {
        if perSpeaker {
            guard speaker >= 0, speaker < channelOf.count else { return }
            var channel = channelOf[speaker]
            if channel < 0 {
                channel = min(nextChannel, channels - 1)
                nextChannel = min(nextChannel + 1, channels)
                channelOf[speaker] = channel
            }
            let stride = channels
            speakers.withUnsafeMutableBufferPointer { dst in
                frame.withSamples { src in for i in 0..<n { dst[i * stride + channel] &+= Int32(src[i]) } }
            }
            spokeThisTick = true
            return
        }
        guard channels == 2, speaker == slot else { return }
        spoken.withUnsafeMutableBufferPointer { dst in frame.withSamples { src in for i in 0..<n { dst[i] = src[i] } } }
        spokeThisTick = true
    }

    /// The participant in `slot` left: whoever takes the slot next is another speaker.
    func release(slot speaker: Int) {
        if speaker >= 0, speaker < channelOf.count { channelOf[speaker] = -1 }
    }

    /// One tick's frame: `heard` (nil for silence) on the only channel, or interleaved after what
    /// was said when split; what each speaker said when per speaker.
    func capture(_ heard: AudioFrame?) {
        guard count < capacity else {
            dropped &+= 1
            if perSpeaker && spokeThisTick { for i in speakers.indices { speakers[i] = 0 } }
            spokeThisTick = false
            return
        }
        let base = ((head + count) % capacity) * n * channels
        let said = spokeThisTick
        ring.withUnsafeMutableBufferPointer { dst in
            if perSpeaker {
                speakers.withUnsafeMutableBufferPointer { acc in
                    for i in 0..<(n * channels) {
                        dst[base + i] = said ? Int16(clamping: acc[i]) : 0
                        acc[i] = 0
                    }
                }
                return
            }
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
