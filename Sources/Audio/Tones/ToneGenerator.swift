import Foundation

/// Plays a `ToneCadence` into 20 ms frames: phase-continuous oscillators, no allocation per frame.
public struct ToneGenerator: Sendable {
    public let cadence: ToneCadence
    public let rate: SampleRate
    /// Peak amplitude of each frequency component.
    public let amplitude: Double
    private var stepIndex = 0
    private var sampleInStep = 0
    private var phases: [Double] = [0, 0, 0, 0]
    public private(set) var isFinished = false

    /// `level` is each component's peak in dBFS (−13 dBFS ≈ −16 dBm0 per tone, a usual telephony level).
    public init(_ cadence: ToneCadence, rate: SampleRate, level: Double = -13) {
        self.cadence = cadence
        self.rate = rate
        amplitude = 32767 * pow(10, level / 20)
        isFinished = cadence.steps.isEmpty || cadence.cycleMilliseconds == 0
    }

    /// Fills `frame` with the next 20 ms (silence once a non-repeating cadence ends).
    public mutating func fill(_ frame: inout AudioFrame) {
        frame.withMutableSamples { out in
            let r = Double(rate.rawValue)
            for i in 0..<out.count {
                guard !isFinished else { out[i] = 0; continue }
                let step = cadence.steps[stepIndex]
                var v = 0.0
                for (k, f) in step.frequencies.prefix(4).enumerated() {
                    v += sin(phases[k])
                    phases[k] += 2 * Double.pi * f / r
                    if phases[k] > 2 * Double.pi { phases[k] -= 2 * Double.pi }
                }
                out[i] = Int16(clamping: Int((v * amplitude).rounded()))
                sampleInStep += 1
                if sampleInStep >= step.milliseconds * rate.rawValue / 1000 {
                    sampleInStep = 0
                    for k in 0..<phases.count { phases[k] = 0 }
                    stepIndex += 1
                    if stepIndex == cadence.steps.count {
                        stepIndex = 0
                        if !cadence.repeats { isFinished = true }
                    }
                }
            }
        }
    }
}
