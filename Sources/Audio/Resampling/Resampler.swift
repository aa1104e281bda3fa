import CSpeexDSP

/// Converts 20 ms frames between 8, 16 and 48 kHz: 8 ↔ 48 kHz (every phone line in a mix, both ways,
/// every tick) with `NarrowbandResampler`'s integer-ratio polyphase filter, the other pairs with speexdsp.
///
/// speexdsp because it is small, made for real-time voice (fixed, bounded work per call, no
/// allocation after creation), exposes one quality knob instead of filter design, and ships in
/// Debian as libspeexdsp. One resampler per direction per stream: it keeps filter history so
/// consecutive frames join without clicks.
public final class Resampler {
    public let input: SampleRate
    public let output: SampleRate
    private let state: OpaquePointer?
    private let narrowband: NarrowbandResampler?

    /// `quality` is speexdsp's 0...10; 5 is its voice default (about 0.3 ms latency at 48 kHz). It does not
    /// apply to 8 ↔ 48 kHz, whose filter is fixed (see `NarrowbandResampler`), unless `general` asks for
    /// speexdsp at every rate (how the benchmark compares the two).
    public init(from input: SampleRate, to output: SampleRate, quality: Int32 = 5, general: Bool = false) throws(CodecError) {
        self.input = input
        self.output = output
        switch (input, output) {
        case (.hz8000, .hz48000) where !general: narrowband = NarrowbandResampler(.up)
        case (.hz48000, .hz8000) where !general: narrowband = NarrowbandResampler(.down)
        default: narrowband = nil
        }
        if input == output || narrowband != nil {
            state = nil
            return
        }
        var error: Int32 = 0
        guard let st = speex_resampler_init(1, UInt32(input.rawValue), UInt32(output.rawValue), quality, &error), error == 0 else {
            throw .creationFailed(code: error)
        }
        state = st
        // Without this the first frames start with the filter's zero-filled history (a short fade-in).
        speex_resampler_skip_zeros(st)
    }

    deinit {
        if let state { speex_resampler_destroy(state) }
    }

    /// Resamples one frame at `input` into one frame at `output`.
    public func process(_ source: AudioFrame, into destination: inout AudioFrame) throws(CodecError) {
        guard source.rate == input else { throw .rateMismatch(expected: input, actual: source.rate) }
        guard destination.rate == output else { throw .rateMismatch(expected: output, actual: destination.rate) }
        if let narrowband {
            source.withSamples { s in destination.withMutableSamples { d in narrowband.process(s, into: d) } }
            return
        }
        guard let state else {
            destination.withMutableSamples { d in source.withSamples { s in _ = d.update(fromContentsOf: s) } }
            return
        }
        let produced = source.withSamples { s in
            destination.withMutableSamples { d -> Int in
                var inLength = UInt32(s.count)
                var outLength = UInt32(d.count)
                speex_resampler_process_int(state, 0, s.baseAddress, &inLength, d.baseAddress, &outLength)
                let n = Int(outLength)
                // Only the first frame after skip_zeros comes up short; pad it rather than shift time.
                if n < d.count { for i in n..<d.count { d[i] = 0 } }
                return n
            }
        }
        _ = produced
    }

    /// Forgets filter history (a new talk spurt, a seek).
    public func reset() {
        if let state { speex_resampler_reset_mem(state) }
        narrowband?.reset()
    }
}
