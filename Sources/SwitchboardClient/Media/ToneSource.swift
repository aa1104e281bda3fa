import Audio
import Foundation

/// A steady sine tone, e.g. 440 Hz, at `amplitude` of full scale (0…1): Audio's `ToneGenerator`
/// playing one continuous step.
public final class ToneSource: AudioSource, @unchecked Sendable {
    // Invariant: `generator` is touched only by `read`, on the one media thread the source is handed to.
    public let frequency: Double
    public let amplitude: Double
    private var generator: ToneGenerator?

    public init(frequency: Double, amplitude: Double = 0.3) {
        self.frequency = frequency
        self.amplitude = max(0, min(1, amplitude))
    }

    public func read(into frame: inout AudioFrame) -> Bool {
        guard amplitude > 0 else {
            frame.clear()
            return true
        }
        if generator?.rate != frame.rate {
            // One-second steps: a whole number of periods for whole-hertz tones, so the phase the
            // generator restarts each step at joins without a click.
            let cadence = ToneCadence([.init([frequency], milliseconds: 1000)], repeats: true)
            generator = ToneGenerator(cadence, rate: frame.rate, level: 20 * log10(amplitude))
        }
        generator?.fill(&frame)
        return true
    }
}

/// Silence, forever.
public final class SilenceSource: AudioSource {
    public init() {}
    public func read(into frame: inout AudioFrame) -> Bool {
        frame.clear()
        return true
    }
}

/// Frames from a closure (a microphone, a synthesizer); return false when done.
public final class CallbackSource: AudioSource {
    private let body: @Sendable (inout AudioFrame) -> Bool
    public init(_ body: @escaping @Sendable (inout AudioFrame) -> Bool) { self.body = body }
    public func read(into frame: inout AudioFrame) -> Bool { body(&frame) }
}
