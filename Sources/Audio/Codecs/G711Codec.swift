/// G.711 at 8 kHz, µ-law (PCMU) or A-law (PCMA): 160 bytes per 20 ms frame.
///
/// Concealment repeats the last decoded frame, halving it for each further lost frame and going
/// silent after three, which hides a single loss and never buzzes through a long gap.
public final class G711Codec: Codec {
    public enum Law: Sendable, Hashable {
        case muLaw
        case aLaw

        /// The static RTP payload type (RFC 3551).
        public var payloadType: UInt8 { self == .muLaw ? 0 : 8 }
    }

    public let law: Law
    public var sampleRate: SampleRate { .hz8000 }
    public var clockRate: Int { 8000 }

    private var last: AudioFrame
    private var lostInARow = 0

    public init(_ law: Law) {
        self.law = law
        last = AudioFrame(rate: .hz8000)
    }

    public func encode(_ frame: AudioFrame, into output: UnsafeMutableRawBufferPointer) throws(CodecError) -> Int {
        guard frame.rate == .hz8000 else { throw .rateMismatch(expected: .hz8000, actual: frame.rate) }
        guard output.count >= frame.count else { throw .outputTooSmall(needed: frame.count, available: output.count) }
        frame.withSamples { s in
            switch law {
            case .muLaw: for i in 0..<s.count { output[i] = MuLaw.encode(s[i]) }
            case .aLaw: for i in 0..<s.count { output[i] = ALaw.encode(s[i]) }
            }
        }
        return frame.count
    }

    public func decode(_ payload: UnsafeRawBufferPointer, into frame: inout AudioFrame) throws(CodecError) {
        guard frame.rate == .hz8000 else { throw .rateMismatch(expected: .hz8000, actual: frame.rate) }
        guard payload.count == frame.count else { throw .wrongFrameLength(expected: frame.count, actual: payload.count) }
        let law = self.law
        frame.withMutableSamples { s in
            switch law {
            case .muLaw: for i in 0..<s.count { s[i] = MuLaw.decode(payload[i]) }
            case .aLaw: for i in 0..<s.count { s[i] = ALaw.decode(payload[i]) }
            }
        }
        last.withMutableSamples { dst in frame.withSamples { src in _ = dst.update(fromContentsOf: src) } }
        lostInARow = 0
    }

    public func conceal(next: UnsafeRawBufferPointer?, into frame: inout AudioFrame) throws(CodecError) {
        guard frame.rate == .hz8000 else { throw .rateMismatch(expected: .hz8000, actual: frame.rate) }
        lostInARow += 1
        if lostInARow > 3 {
            frame.clear()
            return
        }
        last.scale(by: 0.5)
        frame.withMutableSamples { dst in last.withSamples { src in _ = dst.update(fromContentsOf: src) } }
    }
}
