// SDP: parse → serialize → parse is stable, and the typed accessors a negotiation uses never crash on what
// parsed. Each typed attribute value's own round trip is the SDPAttribute target's (one line per input, so
// the description-level work here is not repeated for every value).

/// One fuzz input for the SDP target.
func fuzzSDP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    guard let sdp = try? SessionDescription.parse(text) else { return 0 }
    let encoded = sdp.serialize()
    guard let again = try? SessionDescription.parse(encoded) else { preconditionFailure("re-encoded SDP failed to parse") }
    precondition(again == sdp, "SDP round trip changed the description")
    precondition(again.serialize() == encoded, "SDP serialization is not stable")

    _ = (sdp.origin, sdp.timing, sdp.sessionName, sdp.groups, sdp.bundleMids, sdp.iceLite, sdp.extmapAllowMixed)
    for section in sdp.media {
        _ = (section.mid, section.msid, section.direction, section.setup, section.fingerprint?.bytes, section.iceOptions)
        _ = (section.ssrcs, section.ssrcGroups, section.rtcpMux, section.rtcpReducedSize, section.connection)
        _ = (section.candidates, section.rtcpFeedback, section.extMaps, section.ssrcAttributes)
        let layers = section.simulcastSendStreams
        precondition(layers.isEmpty || (2...MediaDescription.maxSimulcastStreams).contains(layers.count), "simulcast stream count")
        precondition(Set(layers).count == layers.count, "repeated simulcast stream")
        precondition(layers.allSatisfy { (1...16).contains($0.utf8.count) }, "simulcast stream id length")
        // The negotiator asks once per section; a few lookups cover the code without making the
        // harness itself quadratic in the number of rtpmaps.
        for map in section.rtpMaps.prefix(4) {
            if let rtx = section.retransmissionPayloadType(for: map.payloadType) {
                precondition(section.rtpMap(payloadType: rtx)?.encodingName.lowercased() == "rtx", "RTX payload type is not rtx")
                precondition(section.formatParameters.contains { $0.payloadType == rtx && $0["apt"] == String(map.payloadType) },
                             "RTX payload type has no matching apt")
            }
        }
        var copy = section
        copy.direction = .inactive
        precondition(copy.direction == .inactive, "direction setter")
    }
    return 0
}
