import Audio
import Synchronization
import Testing
@testable import SwitchboardClient

@Suite("Audio fan-out (a relayed session's mesh)")
struct AudioFanoutTests {
    /// Frames numbered by their first sample; `count` of them, then no more.
    final class Numbered: AudioSource {
        let produced = Mutex(0)
        let count: Int
        init(count: Int) { self.count = count }
        func read(into frame: inout AudioFrame) -> Bool {
            produced.withLock { n in
                guard n < count else { return false }
                n += 1
                frame = try! AudioFrame(rate: .hz48000, samples: [Int16](repeating: Int16(n), count: 960))
                return true
            }
        }
    }

    static func next(_ source: AudioSource) -> Int16? {
        var frame = AudioFrame(rate: .hz48000)
        return source.read(into: &frame) ? frame.samples[0] : nil
    }

    @Test("each connection gets every frame from the one after it joined; the source is read once per frame; its end is everyone's")
    func fanout() {
        let source = Numbered(count: 80)
        let fanout = AudioFanout(source)
        let a = fanout.reader(), b = fanout.reader()
        #expect([Self.next(a), Self.next(b), Self.next(a), Self.next(b)] == [1, 1, 2, 2])
        let late = fanout.reader()
        #expect([Self.next(a), Self.next(late), Self.next(b)] == [3, 3, 3])
        #expect(source.produced.withLock { $0 } == 3)
        // A connection that falls more than a second behind picks up at the oldest frame kept.
        for _ in 0..<60 { _ = Self.next(a) }
        #expect(Self.next(b) == Int16(63 - AudioFanout.kept + 1))
        for _ in 0..<20 { _ = Self.next(a) }
        #expect(Self.next(a) == nil && source.produced.withLock { $0 } == 80)
    }
}
