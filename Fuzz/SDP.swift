// SDP: parse → serialize → parse is stable, typed attributes re-encode to themselves.

/// One fuzz input for the SDP target.
func fuzzSDP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let candidate = ICECandidate(text) {
        precondition(ICECandidate(candidate.attributeValue) == candidate, "candidate round trip changed it")
    }
    guard let sdp = try? SessionDescription.parse(text) else { return 0 }
    let encoded = sdp.serialize()
    guard let again = try? SessionDescription.parse(encoded) else { preconditionFailure("re-encoded SDP failed to parse") }
    precondition(again == sdp, "SDP round trip changed the description")
    precondition(again.serialize() == encoded, "SDP serialization is not stable")

    _ = (sdp.origin, sdp.timing, sdp.sessionName, sdp.groups, sdp.bundleMids, sdp.iceLite, sdp.extmapAllowMixed)
    for section in sdp.media {
        _ = (section.mid, section.msid, section.direction, section.setup, section.fingerprint?.bytes, section.iceOptions)
        _ = (section.ssrcs, section.ssrcGroups, section.rtcpMux, section.rtcpReducedSize, section.connection)
        for candidate in section.candidates {
            precondition(ICECandidate(candidate.attributeValue) == candidate, "candidate round trip changed it")
        }
        for map in section.rtpMaps {
            precondition(SDPRTPMap(map.attributeValue) == map, "rtpmap round trip")
            _ = section.retransmissionPayloadType(for: map.payloadType)
        }
        for fmtp in section.formatParameters {
            precondition(SDPFormatParameters(fmtp.attributeValue) == fmtp, "fmtp round trip")
            _ = fmtp.pairs
        }
        for fb in section.rtcpFeedback { precondition(SDPRTCPFeedback(fb.attributeValue) == fb, "rtcp-fb round trip") }
        for ext in section.extMaps { precondition(SDPExtMap(ext.attributeValue) == ext, "extmap round trip") }
        for ssrc in section.ssrcAttributes { precondition(SDPSSRCAttribute(ssrc.attributeValue) == ssrc, "ssrc round trip") }
        for group in section.ssrcGroups { precondition(SDPSSRCGroup(group.attributeValue) == group, "ssrc-group round trip") }
        var copy = section
        copy.direction = .inactive
        precondition(copy.direction == .inactive, "direction setter")
    }
    return 0
}
