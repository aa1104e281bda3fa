// Endpointer (SpeechEndpointer): any settings and any audio keep the utterance within its reserved buffer, end
// listening once (and for a reason that fits what was heard), and never before the settings allow.

/// One fuzz input: 5 bytes of settings (rate, start timeout, silence, max duration, sensitivity), then samples, two
/// bytes each, fed in 20 ms frames (the last frame short).
func fuzzEndpointer(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard size >= 5 else { return 0 }
    let rate = [8000, 16000, 48000][Int(bytes[0]) % 3]
    let settings = SpeechEndpointer.Settings(startTimeout: Double(1 + Int(bytes[1]) % 4) / 10, endOnSilence: 0.4 + Double(bytes[2] % 8) / 10,
                                             maxDuration: Double(1 + Int(bytes[3]) % 3) / 10, sensitivity: Int(bytes[4]) % 101)
    var e = SpeechEndpointer(rate: rate, settings: settings)
    let capacity = e.samples.capacity
    let samples = stride(from: 5, to: size - 1, by: 2).map { Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8) }
    let perFrame = rate / 50
    var fed = 0
    var ended: SpeechEndpointer.Ending?
    for start in stride(from: 0, to: samples.count, by: perFrame) {
        let frame = Array(samples[start..<min(samples.count, start + perFrame)])
        let ending = frame.withUnsafeBufferPointer { e.feed($0) }
        if ended == nil { fed += frame.count }
        if let ended { precondition(ending == ended, "listening ended twice") }
        ended = ending
        precondition(e.samples.count <= capacity, "the utterance outgrew its buffer")
    }
    switch ended {
    case .startTimeout?:
        precondition(!e.speaking && e.samples.isEmpty, "a start timeout kept audio")
        precondition(Double(fed) >= settings.startTimeout * Double(rate), "start timeout before its time")
    case .endOnSilence?, .maxDuration?:
        precondition(e.speaking, "an utterance ended that never began")
    case nil:
        precondition(Double(fed) < (settings.startTimeout + settings.maxDuration + settings.endOnSilence) * Double(rate) + Double(perFrame) * 4,
                     "listening outlived every limit")
    }
    return 0
}
