import Audio

/// An RTP stream into a mixer: packets go into a `JitterBuffer` as they arrive; each tick pops
/// one and decodes it, or conceals a loss (Opus FEC from the next packet when it is there) — or, when
/// the mixer ranks the input below the loudest by the levels its sender stamps (RFC 6464), pops it
/// undecoded (`skip`).
///
/// The codec decodes at its own rate; a `Resampler` brings other rates (G.711 legs at 8 kHz) to
/// the mixer's. Buffers are allocated here, once; `receive` and `pull` allocate nothing.
final class RTPMixerInput: MixerInput {
    /// No RFC 6464 level arrived (the sender does not send the extension, or sent nothing since the last tick).
    static let noLevel: UInt8 = 0xFF

    private var jitter: JitterBuffer
    /// The loudest RFC 6464 level among packets arrived since the last `takeArrivedLevel`.
    private var arrivedLevel = RTPMixerInput.noLevel
    /// True once a packet carried a level: from then on the mixer may rank this input by its levels.
    private(set) var carriesLevels = false
    private let codec: any Codec
    private let resampler: Resampler?
    private var decoded: AudioFrame
    private(set) var packetsIn: UInt64 = 0
    /// When the newest packet arrived (monotonic nanoseconds): the worker's tick follows a loud input's arrivals.
    private(set) var lastArrival: UInt64 = 0
    private(set) var decodeErrors: UInt64 = 0
    /// Frames consumed without decoding because the mixer ranked this input below the loudest.
    private(set) var framesSkipped: UInt64 = 0

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

    /// One packet's payload, on arrival, with the RFC 6464 level its sender stamped on it (or `noLevel`).
    @inline(__always)
    func receive(_ payload: UnsafeRawPointer, length: Int, sequence: UInt16, timestamp: UInt32, level: UInt8 = noLevel, now: UInt64) {
        packetsIn &+= 1
        lastArrival = now
        if level != RTPMixerInput.noLevel {
            carriesLevels = true
            if level < arrivedLevel { arrivedLevel = level }
        }
        _ = jitter.insert(sequence: sequence, timestamp: timestamp,
                          payload: UnsafeRawBufferPointer(start: payload, count: length), arrival: now)
    }

    /// The RFC 3550 interarrival jitter of this input's packets, milliseconds.
    var jitterMilliseconds: Double { jitter.statistics.jitterMilliseconds }

    /// The loudest level that arrived since the last call, 127 (silence) when none did; resets.
    func takeArrivedLevel() -> UInt8 {
        defer { arrivedLevel = RTPMixerInput.noLevel }
        return arrivedLevel == RTPMixerInput.noLevel ? 127 : arrivedLevel
    }

    /// Consumes this tick's 20 ms as `pull` would, without decoding: the jitter buffer's timeline moves on.
    func skip(now: UInt64) {
        if case .empty = jitter.pop(now: now) { return }
        framesSkipped &+= 1
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
