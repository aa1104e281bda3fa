// Playout (PlayoutBuffer, a WebSocket leg's buffer): any sequence of frames, marks, clears and ticks plays frames
// once each in the order sent, never one sent before a clear, never beyond the bounds; marks are reached once, in
// order, only after every frame sent before them has played or been cleared, and never when cleared.

/// One fuzz input: each byte an operation (low two bits: push, mark, clear, tick; a push of the high bits + 1
/// frames).
func fuzzPlayout(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    var b = PlayoutBuffer<Int>(rate: .hz8000)
    var frame = [Int16](repeating: 0, count: SampleRate.hz8000.samplesPerFrame)
    var out = AudioFrame(rate: .hz8000)
    var sent = 0, lastPlayed = -1, clearedBefore = 0
    var marksAt: [Int] = []
    var lastMark = -1, firstLive = 0
    var playedOrCleared = 0
    for i in 0..<size {
        let op = data[i]
        switch op & 3 {
        case 0:
            for _ in 0...(Int(op >> 2) % 8) {
                frame[0] = Int16(truncatingIfNeeded: sent)
                frame[1] = Int16(truncatingIfNeeded: sent >> 16)
                let before = b.count
                let kept = frame.withUnsafeBufferPointer { b.push($0) }
                precondition(kept == (before < PlayoutBuffer<Int>.capacity), "a frame dropped with room, or kept without")
                if kept { sent += 1 }
            }
        case 1:
            if b.mark(marksAt.count) { marksAt.append(sent) }
        case 2:
            playedOrCleared += b.clear()
            clearedBefore = sent
            firstLive = marksAt.count
            precondition(b.count == 0)
        default:
            let waiting = b.count
            var reached: [Int] = []
            let pulled = b.pull(into: &out) { reached.append($0) }
            if waiting > PlayoutBuffer<Int>.maxCushion { precondition(pulled, "more frames waited than any cushion and none played") }
            precondition((1...PlayoutBuffer<Int>.maxCushion).contains(b.cushion), "the cushion left its bounds")
            if pulled {
                let seq = Int(UInt16(bitPattern: out.samples[0])) | Int(UInt16(bitPattern: out.samples[1])) << 16
                precondition(seq > lastPlayed, "a frame played twice or out of order")
                precondition(seq >= clearedBefore, "a cleared frame played")
                lastPlayed = seq
                playedOrCleared += 1
            }
            for m in reached {
                precondition(m > lastMark, "a mark reached twice or out of order")
                precondition(marksAt[m] <= playedOrCleared, "a mark reached before its frames played")
                precondition(m >= firstLive, "a cleared mark reached")
                lastMark = m
            }
        }
        precondition(b.count <= PlayoutBuffer<Int>.capacity, "the buffer outgrew its bound")
    }
    return 0
}
