// SDP attribute values: every typed parser re-encodes what it accepted to a value that parses to itself.
// One line per input (`a=name:value`, `candidate:…`, or a bare value), so the parsers of the values a
// description carries are fuzzed directly; the SDP target fuzzes descriptions as a whole.

/// One fuzz input for the SDPAttribute target.
func fuzzSDPAttribute(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    var value = Substring(text)
    if value.hasPrefix("a=") { value = value.dropFirst(2) }
    if let colon = value.firstIndex(of: ":") { value = value[value.index(after: colon)...] }
    let v = String(value)

    if let candidate = ICECandidate(text) {
        precondition(ICECandidate(candidate.attributeValue) == candidate, "candidate round trip changed it")
        precondition(ICECandidate(candidate.candidateString) == candidate, "candidate string round trip changed it")
    }
    if let map = SDPRTPMap(v) { precondition(SDPRTPMap(map.attributeValue) == map, "rtpmap round trip") }
    if let fmtp = SDPFormatParameters(v) {
        precondition(SDPFormatParameters(fmtp.attributeValue) == fmtp, "fmtp round trip")
        for (name, _) in fmtp.pairs.prefix(8) { _ = fmtp[name] }
    }
    if let fb = SDPRTCPFeedback(v) { precondition(SDPRTCPFeedback(fb.attributeValue) == fb, "rtcp-fb round trip") }
    if let ext = SDPExtMap(v) { precondition(SDPExtMap(ext.attributeValue) == ext, "extmap round trip") }
    if let ssrc = SDPSSRCAttribute(v) { precondition(SDPSSRCAttribute(ssrc.attributeValue) == ssrc, "ssrc round trip") }
    if let group = SDPSSRCGroup(v) { precondition(SDPSSRCGroup(group.attributeValue) == group, "ssrc-group round trip") }
    if let group = SDPGroup(v) { precondition(SDPGroup(group.attributeValue) == group, "group round trip") }
    if let msid = SDPMediaStreamID(v) { precondition(SDPMediaStreamID(msid.attributeValue) == msid, "msid round trip") }
    if let fingerprint = SDPFingerprint(v) {
        precondition(SDPFingerprint(fingerprint.attributeValue) == fingerprint, "fingerprint round trip")
        if let bytes = fingerprint.bytes {
            precondition(SDPFingerprint(algorithm: fingerprint.algorithm, bytes: bytes).bytes == bytes, "fingerprint bytes")
        }
    }
    if let crypto = SDPCrypto(attributeValue: v) {
        precondition(SDPCrypto(attributeValue: crypto.attributeValue) == crypto, "crypto round trip")
        if let mki = crypto.mkiBytes { precondition((1...128).contains(mki.count), "MKI length") }
    }
    if let origin = SDPOrigin(v) { precondition(SDPOrigin(origin.value) == origin, "origin round trip") }
    if let timing = SDPTiming(v) { precondition(SDPTiming(timing.value) == timing, "timing round trip") }
    return 0
}
