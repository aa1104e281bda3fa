import Audio
import Foundation

/// A sine tone, e.g. 440 Hz, at `amplitude` of full scale (0…1).
public final class ToneSource: AudioSource, @unchecked Sendable {
    // Invariant: `phase` is touched only by `read`, on the one media thread the source is handed to.
    public let frequency: Double
    public let amplitude: Double
    private var phase = 0.0

    public init(frequency: Double, amplitude: Double = 0.3) {
        self.frequency = frequency
        self.amplitude = max(0, min(1, amplitude))
    }

    public func read(into frame: inout AudioFrame) -> Bool {
        let step = 2 * Double.pi * frequency / Double(frame.rate.rawValue)
        let scale = amplitude * 32767
        var phase = self.phase
        frame.withMutableSamples { s in
            for i in 0..<s.count {
                s[i] = Int16((sin(phase) * scale).rounded())
                phase += step
                if phase > 2 * Double.pi { phase -= 2 * Double.pi }
            }
        }
        self.phase = phase
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
