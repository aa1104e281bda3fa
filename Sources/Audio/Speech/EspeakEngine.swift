import CEspeak
import CSpeexDSP
import Synchronization

/// espeak-ng, which keeps one global synthesizer per process: every call goes through `render`,
/// which holds `lock` for the duration of one synthesis.
enum EspeakEngine {
    /// The engine's sample rate once initialised; nil until then.
    private static let lock = Mutex<Int?>(nil)

    /// Collects the samples espeak hands its callback during one synthesis.
    final class Sink {
        var samples: [Int16] = []
    }

    /// Synthesizes `text` with `voice` into samples at the engine's rate (returned alongside).
    static func render(_ text: String, voice: String, wordsPerMinute: Int32 = 165) throws(SpeechError) -> (samples: [Int16], rate: Int) {
        let result: Result<([Int16], Int), SpeechError> = lock.withLock { state in
            if state == nil {
                let rate = espeak_Initialize(AUDIO_OUTPUT_SYNCHRONOUS, 200, nil, Int32(espeakINITIALIZE_DONT_EXIT))
                guard rate > 0 else { return .failure(.engineFailed(rate)) }
                espeak_SetSynthCallback { wav, count, events in
                    guard let events, let user = events.pointee.user_data else { return 0 }
                    let sink = Unmanaged<Sink>.fromOpaque(user).takeUnretainedValue()
                    if let wav, count > 0 { sink.samples.append(contentsOf: UnsafeBufferPointer(start: wav, count: Int(count))) }
                    return 0
                }
                state = Int(rate)
            }
            guard let rate = state else { return .failure(.engineFailed(-1)) }
            let setVoice = espeak_SetVoiceByName(voice)
            guard setVoice == EE_OK else { return .failure(.engineFailed(Int32(setVoice.rawValue))) }
            espeak_SetParameter(espeakRATE, wordsPerMinute, 0)
            let sink = Sink()
            let user = Unmanaged.passUnretained(sink).toOpaque()
            let status = withExtendedLifetime(sink) {
                text.withCString { cText in
                    espeak_Synth(cText, text.utf8.count + 1, 0, POS_CHARACTER, 0, UInt32(espeakCHARS_UTF8), nil, user)
                }
            }
            guard status == EE_OK else { return .failure(.engineFailed(Int32(status.rawValue))) }
            return .success((sink.samples, rate))
        }
        return try result.get()
    }

    /// Converts a whole buffer between arbitrary rates (speexdsp, voice quality).
    static func convert(_ samples: [Int16], from inRate: Int, to outRate: Int) throws(SpeechError) -> [Int16] {
        guard inRate != outRate, !samples.isEmpty else { return samples }
        var error: Int32 = 0
        guard let st = speex_resampler_init(1, UInt32(inRate), UInt32(outRate), 5, &error), error == 0 else { throw .engineFailed(error) }
        defer { speex_resampler_destroy(st) }
        speex_resampler_skip_zeros(st)
        let expected = samples.count * outRate / inRate
        var out = [Int16](repeating: 0, count: expected + 64)
        var produced = 0
        samples.withUnsafeBufferPointer { src in
            out.withUnsafeMutableBufferPointer { dst in
                var inLen = UInt32(src.count)
                var outLen = UInt32(dst.count)
                speex_resampler_process_int(st, 0, src.baseAddress, &inLen, dst.baseAddress, &outLen)
                produced = Int(outLen)
                // Drain the filter's tail with silence so the last word is not clipped.
                let latency = Int(speex_resampler_get_input_latency(st))
                let zeros = [Int16](repeating: 0, count: latency)
                zeros.withUnsafeBufferPointer { z in
                    var zLen = UInt32(z.count)
                    var tailLen = UInt32(dst.count - produced)
                    speex_resampler_process_int(st, 0, z.baseAddress, &zLen, dst.baseAddress! + produced, &tailLen)
                    produced += Int(tailLen)
                }
            }
        }
        return Array(out.prefix(min(produced, expected)))
    }
}
