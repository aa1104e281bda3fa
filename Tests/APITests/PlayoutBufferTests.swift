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

    @Test("playing starts once two frames wait or one has waited a tick, and again so after running dry")
    func priming() {
        var b = PlayoutBuffer<Int>(rate: .hz16000)
        #expect(tick(&b).0 == nil)
        push(&b, 1)
        #expect(tick(&b).0 == nil, "a lone frame waits one tick for a second")
        #expect(tick(&b).0 == 1, "then plays")
        #expect(tick(&b).0 == nil)
        push(&b, 2)
        push(&b, 3)
        #expect(tick(&b).0 == 2, "two waiting play at once")
        push(&b, 4)
        #expect(tick(&b).0 == 3, "while playing, a frame that came in time plays in its turn")
        #expect(tick(&b).0 == 4)
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
