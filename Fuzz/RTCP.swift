// RTCP: compound parse → serialize → parse is stable; nothing crashes.

/// One fuzz input for the RTCP target.
func fuzzRTCP(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    var iterator = RTCPCompoundIterator(bytes)
    while let next = try? iterator.next() {
        precondition(next.range.upperBound <= size, "packet range past the buffer")
    }
    guard let packets = try? RTCPPacket.parseCompound(bytes) else { return 0 }
    for packet in packets {
        switch packet {
        case .nack(let nack):
            let rebuilt = GenericNACK(senderSSRC: nack.senderSSRC, mediaSSRC: nack.mediaSSRC, lost: nack.lostSequenceNumbers)
            precondition(Set(rebuilt.lostSequenceNumbers) == Set(nack.lostSequenceNumbers), "NACK rebuild lost sequences")
        case .transportFeedback(let feedback): _ = feedback.arrivals
        case .remb(let remb): _ = remb.bitrate
        default: break
        }
    }
    guard let encoded = try? RTCPPacket.serializeCompound(packets) else { preconditionFailure("parsed compound failed to serialize") }
    guard let again = try? RTCPPacket.parseCompound(encoded) else { preconditionFailure("re-encoded compound failed to parse") }
    precondition(again == packets, "RTCP round trip changed the packets")
    return 0
}
