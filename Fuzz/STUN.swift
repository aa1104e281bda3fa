// STUN: parse → serialize → parse is stable; re-signing verifies; nothing crashes.

/// Deterministic stand-in for HMAC-SHA1 so integrity paths run without crypto.
private func fakeHMAC(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] {
    let seed = CRC32.checksum(key + data)
    return (0..<20).map { UInt8(truncatingIfNeeded: seed >> UInt32(($0 % 4) * 8)) ^ UInt8($0) }
}

/// One fuzz input for the STUN target.
func fuzzSTUN(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: data, count: size)
    _ = PacketDemux.classify(bytes)
    _ = STUNMessage.isSTUN(bytes)
    guard let message = try? STUNMessage.parse(bytes) else { return 0 }
    _ = message.verifyFingerprint(in: bytes)
    _ = message.verifyIntegrity(in: bytes, key: [1, 2, 3], hmacSHA1: fakeHMAC)
    _ = message.unknownComprehensionRequired
    _ = message.xorMappedAddress?.description
    _ = message.mappedAddress?.description

    guard let encoded = try? message.serialize() else { preconditionFailure("parsed message failed to serialize") }
    guard let again = try? STUNMessage.parse(encoded) else { preconditionFailure("re-encoded message failed to parse") }
    precondition(again == message, "STUN round trip changed the message")

    if let signed = try? message.serialize(integrityKey: [9, 9], hmacSHA1: fakeHMAC, fingerprint: true) {
        guard let parsed = try? STUNMessage.parse(signed) else { preconditionFailure("signed message failed to parse") }
        precondition(parsed.verifyFingerprint(in: signed), "fresh fingerprint did not verify")
        precondition(parsed.verifyIntegrity(in: signed, key: [9, 9], hmacSHA1: fakeHMAC), "fresh integrity did not verify")
    }
    return 0
}
