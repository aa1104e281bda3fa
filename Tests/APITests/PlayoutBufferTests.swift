import Audio
import Testing
import Wire
@testable import API

@Suite("WebSocket playout: what a socket sends is heard whole, in order, with its marks")
struct PlayoutBufferTests {
    /// Pushes a 16 kHz frame whose samples are all `value`.
    func push(_ b: inout PlayoutBuffer<Int>, _ value: Int16) {
        let f = [Int16](repeating: value, count: SampleRate.hz16000.samplesPerFrame)
        f.withUnsafeBufferPointer { _ = b.push($0) }
    }

    /// One tick: the frame's first sample (nil when nothing plays) and the marks reached.
    func tick(_ b: inout PlayoutBuffer<Int>) -> (Int16?, [Int]) {
        var out = AudioFrame(rate: .hz16000)
        var marks: [Int] = []
        let pulled = b.pull(into: &out) { marks.append($0) }
        return (pulled ? out.withSamples { $0[0] } : nil, marks)
    }

    @Test("a reply sent at once, far more than the first ring holds, plays whole and in order, one frame a tick")
    func burst() {
        var b = PlayoutBuffer<Int>(rate: .hz16000)
        for i in 0..<1500 { push(&b, Int16(i % 30000)) }
        #expect(b.count == 1500)
        for i in 0..<1500 { #expect(tick(&b).0 == Int16(i % 30000)) }
        #expect(tick(&b).0 == nil)
        #expect(b.dropped == 0)
    }

    @Test("playing starts once two frames wait or one has waited a tick; frames that come in time play in turn")
    func priming() {
        var b = PlayoutBuffer<Int>(rate: .hz16000)
        #expect(tick(&b).0 == nil)
        push(&b, 1)
        #expect(tick(&b).0 == nil, "a lone frame waits one tick for a second")
        #expect(tick(&b).0 == 1, "then plays")
        push(&b, 2)
        push(&b, 3)
        #expect(tick(&b).0 == 2, "while playing, frames that came in time play in their turn")
        #expect(tick(&b).0 == 3)
        #expect(b.cushion == 1 && b.underruns == 0)
    }

    @Test("a frame that comes late after running dry adds a frame of cushion; a pause does not; calm takes it away")
    func adaptiveCushion() {
        var b = PlayoutBuffer<Int>(rate: .hz16000)
        push(&b, 1)
        push(&b, 2)
        #expect(tick(&b).0 == 1)
        #expect(tick(&b).0 == 2)
        #expect(tick(&b).0 == nil, "ran dry")
        push(&b, 3)  // one tick late
        #expect(b.cushion == 2 && b.underruns == 1)
        #expect(tick(&b).0 == nil)
        #expect(tick(&b).0 == nil, "with two frames of cushion, three must wait or the first wait three ticks")
        #expect(tick(&b).0 == 3)
        // A pause (longer than any cushion) is the far end stopping, not lateness.
        for _ in 0..<10 { #expect(tick(&b).0 == nil) }
        push(&b, 4)
        #expect(b.cushion == 2 && b.underruns == 1)
        // Thirty calm seconds, a frame to spare at every tick: one frame of cushion again.
        for i in 0..<(PlayoutBuffer<Int>.shrinkAfter + 10) { push(&b, Int16(i % 1000)) }
        for _ in 0..<(PlayoutBuffer<Int>.shrinkAfter + 3) { _ = tick(&b) }
        #expect(b.cushion == 1)
        // Never beyond six frames, however often it is late.
        var late = PlayoutBuffer<Int>(rate: .hz16000)
        for i in 0..<20 {
            push(&late, Int16(i))
            push(&late, Int16(i))
            while tick(&late).0 == nil && late.count > 0 {}
            while late.count > 0 { _ = tick(&late) }
            _ = tick(&late)
        }
        #expect(late.cushion == PlayoutBuffer<Int>.maxCushion)
    }

    @Test("beyond a minute of frames waiting, new ones are dropped, not the ones already waiting")
    func capacity() {
        var b = PlayoutBuffer<Int>(rate: .hz16000)
        for i in 0..<PlayoutBuffer<Int>.capacity { push(&b, Int16(i % 1000)) }
        push(&b, -1)
        push(&b, -2)
        #expect(b.dropped == 2)
        #expect(b.count == PlayoutBuffer<Int>.capacity)
        #expect(tick(&b).0 == 0)
        // So with marks: past their bound, new ones are dropped.
        let kept = (0..<PlayoutBuffer<Int>.markCapacity).map { b.mark($0) }
        #expect(kept.allSatisfy { $0 })
        let beyond = b.mark(-1)
        #expect(!beyond)
        #expect(b.droppedMarks == 1)
        // A frame of the wrong size is not queued.
        let short = [Int16](repeating: 0, count: 10).withUnsafeBufferPointer { b.push($0) }
        #expect(!short)
    }

    @Test("a mark is reached once the frames before it have played; one with nothing before it at the next tick")
    func marks() {
        var b = PlayoutBuffer<Int>(rate: .hz16000)
        b.mark(1)
        #expect(tick(&b) == (nil, [1]))
        push(&b, 10)
        push(&b, 11)
        b.mark(2)
        push(&b, 12)
        b.mark(3)
        b.mark(4)
        #expect(tick(&b) == (10, []))
        #expect(tick(&b) == (11, [2]))
        #expect(tick(&b) == (12, [3, 4]))
        #expect(tick(&b) == (nil, []))
    }

    @Test("clear discards the frames waiting and the marks behind them; what comes after plays and marks as usual")
    func clear() {
        var b = PlayoutBuffer<Int>(rate: .hz16000)
        for i in 0..<300 { push(&b, Int16(i)) }
        b.mark(1)
        #expect(tick(&b).0 == 0)
        #expect(b.clear() == 299)
        #expect(tick(&b) == (nil, []), "the mark behind the cleared audio is gone")
        push(&b, 500)
        push(&b, 501)
        b.mark(2)
        #expect(tick(&b) == (500, []))
        #expect(tick(&b) == (501, [2]))
    }

    @Test("the socket's text messages: clear and notify (its payload, else {}); anything else is not a command")
    func commands() {
        #expect(WebSocketLine.Command(text: #"{"action":"clear"}"#) == .clear)
        #expect(WebSocketLine.Command(text: #"{"action":"notify","payload":{"id":7}}"#) == .notify(.object(["id": .number(7)])))
        #expect(WebSocketLine.Command(text: #"{"action":"notify"}"#) == .notify(.object([:])))
        for text in [#"{"action":"dance"}"#, #"{"event":"websocket:dtmf"}"#, "not json", #"["clear"]"#, ""] {
            #expect(WebSocketLine.Command(text: text) == nil, "\(text)")
        }
    }
}
