// RTP: parse → serialize → parse is stable; in-place accessors stay in bounds.

/// One fuzz input for the RTP target.
func fuzzRTP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    guard let view = try? RTPView(bytes) else {
        _ = try? RTPPacket.parse(bytes)
        return 0
    }
    precondition(view.headerLength + view.payloadLength + view.paddingLength == size, "layout does not cover the packet")
    var copy = Array(bytes)
    copy.withUnsafeMutableBytes { b in
        view.forEachExtensionElement(in: UnsafeRawBufferPointer(b)) { id, range in
            precondition(range.lowerBound >= view.extensionOffset && range.upperBound <= view.headerLength, "element out of block")
            _ = view.audioLevel(id: id, in: UnsafeRawBufferPointer(b))
            _ = view.setAbsSendTime(id: id, 0xABCDEF, in: b)
            _ = view.setTransportSequenceNumber(id: id, 7, in: b)
            _ = view.setAudioLevel(id: id, voiceActivity: true, level: 200, in: b)
            _ = view.mid(id: id, in: UnsafeRawBufferPointer(b))
            _ = view.setMid(id: id, "x", in: b)
            return true
        }
        RTPView.setSSRC(RTPView.ssrc(in: UnsafeRawBufferPointer(b)) &+ 1, in: b)
        RTPView.setSequenceNumber(RTPView.sequenceNumber(in: UnsafeRawBufferPointer(b)) &+ 1, in: b)
        RTPView.setTimestamp(RTPView.timestamp(in: UnsafeRawBufferPointer(b)) &+ 1, in: b)
        let (marker, payloadType) = RTPView.markerAndPayloadType(in: UnsafeRawBufferPointer(b))
        RTPView.setPayloadType(payloadType &+ 1, in: b)
        RTPView.setMarker(!marker, in: b)
    }
    precondition((try? RTPView.parse(copy)) == RTPView(markerFlipped: view, in: copy), "in-place rewrite changed the layout")
    // The payload read as VP8, as the SFU reads every video packet (key frames, and their picture size for simulcast).
    if view.payloadLength > 0, let payload = bytes.baseAddress.map({ $0 + view.payloadOffset }) {
        let key = VP8PayloadDescriptor.startsKeyframe(payload, length: view.payloadLength)
        if let size = VP8PayloadDescriptor.keyframeSize(payload, length: view.payloadLength) {
            precondition(key && (1...0x3FFF).contains(size.width) && (1...0x3FFF).contains(size.height), "VP8 key frame size")
        }
        // And as H.264: an SPS (alone or in a STAP-A) and the picture size it declares.
        if let size = H264Parameters.keyframeSize(payload, length: view.payloadLength) {
            precondition((1...16_384).contains(size.width) && (1...16_384).contains(size.height), "H.264 picture size")
        }
    }

    guard let packet = try? RTPPacket.parse(bytes) else { return 0 }
    guard let encoded = try? packet.serialize() else { preconditionFailure("parsed packet failed to serialize") }
    guard let again = try? RTPPacket.parse(encoded) else { preconditionFailure("re-encoded packet failed to parse") }
    precondition(again == packet, "RTP round trip changed the packet")
    return 0
}

extension RTPView {
    /// The layout expected after flipping marker and bumping the payload type.
    fileprivate init?(markerFlipped view: RTPView, in bytes: [UInt8]) {
        guard let parsed = try? RTPView.parse(bytes) else { return nil }
        precondition(parsed.headerLength == view.headerLength && parsed.payloadLength == view.payloadLength
            && parsed.paddingLength == view.paddingLength && parsed.marker != view.marker, "layout moved")
        self = parsed
    }
}
