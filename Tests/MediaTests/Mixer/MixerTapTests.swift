import Audio
import Testing
@testable import Media

/// A frame at 8 kHz (160 samples) whose every sample is `value`.
private func frame(_ value: Int16) throws -> AudioFrame {
    try AudioFrame(rate: .hz8000, samples: [Int16](repeating: value, count: SampleRate.hz8000.samplesPerFrame))
}

/// The value of each 160-sample frame in `samples` (mono), or nil where a frame is not constant.
private func frameValues(_ samples: [Int16], channels: Int = 1, channel: Int = 0) -> [Int16?] {
    let n = SampleRate.hz8000.samplesPerFrame
    let frames = samples.count / (n * channels)
    return (0..<frames).map { f in
        let values = (0..<n).map { samples[(f * n + $0) * channels + channel] }
        return Set(values).count == 1 ? values[0] : nil
    }
}

@Suite("Mixer tap ring")
struct MixerTapTests {
    func tap(capacity: Int, split: Bool = false) -> MixerTap {
        MixerTap(id: MixerTapID("t"), participant: split ? MixerParticipantID("p") : nil, slot: split ? 0 : -1,
                 split: split, capacity: capacity, rate: .hz8000)
    }

    @Test("frames drain in the order they were captured; an idle tick is a frame of silence")
    func order() throws {
        let t = tap(capacity: 10)
        t.capture(try frame(1))
        t.capture(nil)
        t.capture(try frame(3))
        #expect(frameValues(t.drain()) == [1, 0, 3])
        #expect(t.captured == 3)
        #expect(t.dropped == 0)
        #expect(t.drain().isEmpty)
    }

    @Test("a full ring drops the newest frames and counts them; it never grows", arguments: [1, 3, 8])
    func capacity(_ capacity: Int) throws {
        let t = tap(capacity: capacity)
        for k in 0..<(capacity + 5) { t.capture(try frame(Int16(k + 1))) }
        let drained = t.drain()
        #expect(drained.count == capacity * SampleRate.hz8000.samplesPerFrame)
        #expect(frameValues(drained) == (1...capacity).map { Int16($0) })
        #expect(t.dropped == 5)
        #expect(t.captured == UInt64(capacity))
    }

    @Test("after a drain the ring takes frames again, wrapping around its storage")
    func wraps() throws {
        let t = tap(capacity: 3)
        for k in 1...2 { t.capture(try frame(Int16(k))) }
        #expect(frameValues(t.drain()) == [1, 2])
        for k in 3...6 { t.capture(try frame(Int16(k))) }
        #expect(frameValues(t.drain()) == [3, 4, 5])
        #expect(t.dropped == 1)
    }

    @Test("a split tap puts what the participant said on the left and what it heard on the right")
    func split() throws {
        let t = tap(capacity: 4, split: true)
        #expect(t.channels == 2)
        t.noteInput(try frame(7), slot: 0)
        t.capture(try frame(9))  // said and heard
        t.capture(try frame(5))  // heard only: the left is silent, not last tick's words
        t.noteInput(try frame(4), slot: 0)
        t.capture(nil)  // said only: the right is silent
        t.capture(nil)  // neither
        let samples = t.drain()
        #expect(samples.count == 4 * 2 * SampleRate.hz8000.samplesPerFrame)
        #expect(frameValues(samples, channels: 2, channel: 0) == [7, 0, 4, 0])
        #expect(frameValues(samples, channels: 2, channel: 1) == [9, 5, 0, 0])
    }

    @Test("a speaker tap gives each speaker a channel: the participant first, the others as first heard, the rest on the last")
    func speakers() throws {
        let t = MixerTap(id: MixerTapID("t"), participant: MixerParticipantID("p"), slot: 2, split: false, speakerChannels: 3,
                         slots: 8, capacity: 8, rate: .hz8000)
        #expect(t.channels == 3 && t.perSpeaker)
        t.noteInput(try frame(5), slot: 4)  // first heard: the second channel
        t.noteInput(try frame(7), slot: 2)  // the participant: the first
        t.capture(nil)
        t.noteInput(try frame(1), slot: 6)  // the third channel, the last free one
        t.noteInput(try frame(2), slot: 7)  // no channel left: added to the last
        t.noteInput(try frame(3), slot: 4)
        t.capture(try frame(9))  // what anyone heard is not recorded here
        t.capture(nil)  // nobody spoke: silence, not last tick's words
        t.release(slot: 4)
        t.noteInput(try frame(8), slot: 4)  // another participant in the slot: a new speaker, on the last channel
        t.capture(nil)
        let samples = t.drain()
        #expect(frameValues(samples, channels: 3, channel: 0) == [7, 0, 0, 0])
        #expect(frameValues(samples, channels: 3, channel: 1) == [5, 3, 0, 0])
        #expect(frameValues(samples, channels: 3, channel: 2) == [0, 3, 0, 8])
    }

    @Test("a mono tap ignores the participant's input")
    func monoIgnoresInput() throws {
        let t = tap(capacity: 2)
        t.noteInput(try frame(7), slot: 0)
        t.capture(nil)
        #expect(frameValues(t.drain()) == [0])
    }
}

@Suite("Frame queue mixer input")
struct FrameQueueMixerInputTests {
    let n = SampleRate.hz8000.samplesPerFrame

    func samples(_ values: [Int16]) -> [Int16] { values.flatMap { [Int16](repeating: $0, count: n) } }

    @Test("frames play in order, one per pull; an empty queue has nothing to mix")
    func fifo() throws {
        let q = FrameQueueMixerInput(rate: .hz8000, capacity: 4)
        #expect(q.enqueue(samples([1, 2, 3])) == 3)
        var out = AudioFrame(rate: .hz8000)
        var played: [Int16?] = []
        while q.pull(into: &out, now: 0) { played += frameValues(out.samples) }
        #expect(played == [1, 2, 3])
        #expect(q.framesPlayed == 3)
        #expect(!q.pull(into: &out, now: 0))
    }

    @Test("only whole frames are taken, and no more than the room left")
    func bounded() {
        let q = FrameQueueMixerInput(rate: .hz8000, capacity: 3)
        #expect(q.enqueue(samples([1]) + [Int16](repeating: 9, count: n / 2)) == 1)
        #expect(q.queued == 1)
        #expect(q.enqueue(samples([2, 3, 4, 5])) == 2)
        #expect(q.space == 0)
        #expect(q.enqueue(samples([6])) == 0)
    }

    @Test("the ring wraps: frames queued after some played keep their order")
    func wraps() throws {
        let q = FrameQueueMixerInput(rate: .hz8000, capacity: 3)
        var out = AudioFrame(rate: .hz8000)
        _ = q.enqueue(samples([1, 2, 3]))
        _ = q.pull(into: &out, now: 0)
        _ = q.pull(into: &out, now: 0)
        #expect(q.enqueue(samples([4, 5])) == 2)
        var played: [Int16?] = []
        while q.pull(into: &out, now: 0) { played += frameValues(out.samples) }
        #expect(played == [3, 4, 5])
    }

    @Test("finished only once ended and drained; clear drops what is queued")
    func finished() {
        let q = FrameQueueMixerInput(rate: .hz8000, capacity: 3)
        var out = AudioFrame(rate: .hz8000)
        _ = q.enqueue(samples([1, 2]))
        q.ended = true
        #expect(!q.finished)
        _ = q.pull(into: &out, now: 0)
        q.clear()
        #expect(q.queued == 0 && q.space == 3)
        #expect(q.finished)
    }
}
