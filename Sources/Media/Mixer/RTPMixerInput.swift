import Audio

/// An RTP stream into a mixer: packets go into a `JitterBuffer` as they arrive; each tick pops
/// one and decodes it, or conceals a loss (Opus FEC from the next packet when it is there).
///
/// The codec decodes at its own rate; a `Resampler` brings other rates (G.711 legs at 8 kHz) to
/// the mixer's. Buffers are allocated here, once; `receive` and `pull` allocate nothing.
final class RTPMixerInput: MixerInput {
    private var jitter: JitterBuffer
    private let codec: any Codec
    private let resampler: Resampler?
    private var decoded: AudioFrame
    private(set) var packetsIn: UInt64 = 0
    private(set) var decodeErrors: UInt64 = 0

    var finished: Bool { false }

    init(codec: any Codec, codecRate: SampleRate, mixerRate: SampleRate, clockRate: Int) throws(CodecError) {
        self.codec = codec
        var configuration = JitterBuffer.Configuration()
        configuration.clockRate = clockRate
        jitter = JitterBuffer(configuration)
        resampler = codecRate == mixerRate ? nil : try Resampler(from: codecRate, to: mixerRate)
        decoded = AudioFrame(rate: codecRate)
        decoded.clear()
    }

    /// One packet's payload, on arrival.
    @inline(__always)
    func receive(_ payload: UnsafeRawPointer, length: Int, sequence: UInt16, timestamp: UInt32, now: UInt64) {
        packetsIn &+= 1
        _ = jitter.insert(sequence: sequence, timestamp: timestamp,
                          payload: UnsafeRawBufferPointer(start: payload, count: length), arrival: now)
    }

    func pull(into frame: inout AudioFrame, now: UInt64) -> Bool {
        let ok: Bool
        if resampler == nil {
            ok = decode(into: &frame, now: now)
        } else {
            ok = decode(into: &decoded, now: now)
            if ok { do { try resampler?.process(decoded, into: &frame) } catch { return false } }
        }
        return ok
    }

    private func decode(into frame: inout AudioFrame, now: UInt64) -> Bool {
        switch jitter.pop(now: now) {
        case .packet(_, _, let payload):
            let decodedOK = payload.withUnsafeBytes { bytes in decodePacket(bytes, into: &frame) }
            if !decodedOK {
                decodeErrors &+= 1
                return concealed(next: nil, into: &frame)
            }
            return true
        case .conceal(_, let next):
            if let next { return next.withUnsafeBytes { bytes in concealed(next: bytes, into: &frame) } }
            return concealed(next: nil, into: &frame)
        case .empty:
            return false
        }
    }

    private func decodePacket(_ bytes: UnsafeRawBufferPointer, into frame: inout AudioFrame) -> Bool {
        do { try codec.decode(bytes, into: &frame) } catch { return false }
        return true
    }

    private func concealed(next: UnsafeRawBufferPointer?, into frame: inout AudioFrame) -> Bool {
        do { try codec.conceal(next: next, into: &frame) } catch { return false }
        return true
    }
}
