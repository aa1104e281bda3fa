import Audio

/// A line's frames between its far end's rate and its mixer's, both ways: passed through when they are
/// the same (a conversation of G.711 phones mixes at 8 kHz: `Mixer`), else resampled to or from 48 kHz,
/// each direction's filter history dropped when the mixer's rate changed since that direction last
/// resampled. Made once per session (its resamplers with it); nothing allocates per frame. On the line's loop.
final class LineResampling {
    private let up: Resampler
    private let down: Resampler
    /// Whether each direction passed a frame through since it last resampled (its history is stale).
    private var upStale = false
    private var downStale = false

    /// `rate`: the far end's.
    init(rate: SampleRate) throws {
        up = try Resampler(from: rate, to: .hz48000)
        down = try Resampler(from: .hz48000, to: rate)
    }

    /// What the far end said (at its rate) into `frame`, at the mixer's rate; false if that rate is neither.
    func toMixer(_ said: AudioFrame, into frame: inout AudioFrame) -> Bool {
        convert(said, into: &frame, by: up, stale: &upStale)
    }

    /// What the participant hears (at the mixer's rate) into `outgoing`, at the far end's rate.
    func fromMixer(_ heard: AudioFrame, into outgoing: inout AudioFrame) -> Bool {
        convert(heard, into: &outgoing, by: down, stale: &downStale)
    }

    private func convert(_ source: AudioFrame, into destination: inout AudioFrame, by resampler: Resampler, stale: inout Bool) -> Bool {
        if destination.rate == source.rate {
            source.withSamples { destination.copy(from: $0) }
            stale = true
            return true
        }
        if stale {
            resampler.reset()
            stale = false
        }
        return (try? resampler.process(source, into: &destination)) != nil
    }
}
