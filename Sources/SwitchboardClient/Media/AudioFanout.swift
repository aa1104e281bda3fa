import Audio
import Synchronization

/// One published audio source sent on several peer connections (a relayed session's mesh, one connection per
/// subscriber): the source is read once per 20 ms frame, and each reader gets every frame from the one after it
/// joined. Readers run on the media thread, about in step; the last second is kept for one that falls behind.
final class AudioFanout: Sendable {
    private struct State {
        /// The frames read, `first` being the number of `frames[0]`.
        var frames: [AudioFrame] = []
        var first = 0
        var ended = false
        /// Each reader's next frame number.
        var next: [Int] = []
    }

    private final class Reader: AudioSource {
        let fanout: AudioFanout
        let id: Int
        init(fanout: AudioFanout, id: Int) { (self.fanout, self.id) = (fanout, id) }
        func read(into frame: inout AudioFrame) -> Bool { fanout.read(id, into: &frame) }
    }

    static let kept = 50
    private let source: AudioSource
    private let state = Mutex(State())

    init(_ source: AudioSource) {
        self.source = source
    }

    /// A source for one more connection.
    func reader() -> AudioSource {
        let id = state.withLock { s in
            s.next.append(s.first + s.frames.count)
            return s.next.count - 1
        }
        return Reader(fanout: self, id: id)
    }

    private func read(_ id: Int, into frame: inout AudioFrame) -> Bool {
        state.withLock { s in
            if s.next[id] >= s.first + s.frames.count {
                guard !s.ended else { return false }
                var fresh = AudioFrame(rate: .hz48000)
                guard source.read(into: &fresh) else {
                    s.ended = true
                    return false
                }
                s.frames.append(fresh)
                if s.frames.count > Self.kept {
                    s.frames.removeFirst()
                    s.first += 1
                }
            }
            let index = max(s.next[id], s.first) - s.first
            frame = s.frames[index]
            s.next[id] = s.first + index + 1
            return true
        }
    }
}
