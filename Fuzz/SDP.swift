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
        let maps = section.rtpMaps
        for map in maps { precondition(SDPRTPMap(map.attributeValue) == map, "rtpmap round trip") }
        // The negotiator asks once per section; a few lookups cover the code without making the
        // harness itself quadratic in the number of rtpmaps.
        for map in maps.prefix(4) {
            if let rtx = section.retransmissionPayloadType(for: map.payloadType) {
                precondition(section.rtpMap(payloadType: rtx)?.encodingName.lowercased() == "rtx", "RTX payload type is not rtx")
                precondition(section.formatParameters.contains { $0.payloadType == rtx && $0["apt"] == String(map.payloadType) },
                             "RTX payload type has no matching apt")
            }
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
