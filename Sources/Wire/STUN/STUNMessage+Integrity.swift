/// HMAC-SHA1 supplied by the caller: Wire is stdlib-only, so the Crypto module (or a
/// test) injects the primitive. Returns the 20-byte MAC of `data` under `key`.
public typealias STUNHMACSHA1 = (_ key: [UInt8], _ data: [UInt8]) -> [UInt8]

extension STUNMessage {
    /// XOR constant for FINGERPRINT ("STUN" in ASCII), RFC 8489 §14.7.
    public static let fingerprintXOR: UInt32 = 0x5354_554E

    /// Checks MESSAGE-INTEGRITY (RFC 8489 §14.5) against the bytes this message was parsed from.
    ///
    /// The MAC covers everything before the attribute, with the header length rewritten
    /// as if the message ended right after MESSAGE-INTEGRITY: that is how a sender that
    /// appends FINGERPRINT afterwards computed it. `key` is the ICE password for
    /// short-term credentials, or MD5(username:realm:password) for long-term ones.
    public func verifyIntegrity(
        in bytes: UnsafeRawBufferPointer, key: [UInt8], hmacSHA1: STUNHMACSHA1
    ) -> Bool {
        guard let offset = integrityOffset, offset >= STUNMessage.headerLength,
              offset + 24 <= bytes.count, PacketBytes.u16(bytes, offset + 2) == 20 else { return false }
        var covered = Array(UnsafeRawBufferPointer(rebasing: bytes[0..<offset]))
        STUNMessage.patchLength(&covered, to: offset + 24 - STUNMessage.headerLength)
        let expected = hmacSHA1(key, covered)
        guard expected.count == 20 else { return false }
        // Constant-time compare so timing does not leak how many bytes matched.
        var difference: UInt8 = 0
        for i in 0..<20 { difference |= expected[i] ^ bytes[offset + 4 + i] }
        return difference == 0
    }

    /// Checks MESSAGE-INTEGRITY against the bytes this message was parsed from.
    public func verifyIntegrity(in bytes: some ContiguousBytesView, key: [UInt8], hmacSHA1: STUNHMACSHA1) -> Bool {
        bytes.withRawBytes { verifyIntegrity(in: $0, key: key, hmacSHA1: hmacSHA1) }
    }

    /// Checks FINGERPRINT (RFC 8489 §14.7): CRC-32 of everything before it XOR 0x5354554E.
    /// FINGERPRINT must be the last attribute, so the header length already covers it.
    public func verifyFingerprint(in bytes: UnsafeRawBufferPointer) -> Bool {
        guard let offset = fingerprintOffset, offset >= STUNMessage.headerLength,
              offset + 8 == bytes.count, PacketBytes.u16(bytes, offset + 2) == 4 else { return false }
        let crc = CRC32.checksum(UnsafeRawBufferPointer(rebasing: bytes[0..<offset])) ^ STUNMessage.fingerprintXOR
        return crc == PacketBytes.u32(bytes, offset + 4)
    }

    /// Checks FINGERPRINT against the bytes this message was parsed from.
    public func verifyFingerprint(in bytes: some ContiguousBytesView) -> Bool {
        bytes.withRawBytes { verifyFingerprint(in: $0) }
    }

    /// Encodes the message and appends a fresh MESSAGE-INTEGRITY and/or FINGERPRINT.
    ///
    /// Any MESSAGE-INTEGRITY or FINGERPRINT already in `attributes` is dropped first, so
    /// a parsed message can be re-signed. Order follows RFC 8489 §14.5/§14.7: integrity,
    /// then fingerprint last.
    public func serialize(
        integrityKey: [UInt8]?, hmacSHA1: STUNHMACSHA1? = nil, fingerprint: Bool, padding: UInt8 = 0
    ) throws(STUNError) -> [UInt8] {
        var out = headerBytes()
        for attribute in attributes where attribute.type != .messageIntegrity && attribute.type != .fingerprint {
            try STUNMessage.append(attribute, transactionID: transactionID, padding: padding, to: &out)
        }
        if let key = integrityKey, let hmacSHA1 {
            STUNMessage.patchLength(&out, to: out.count + 24 - STUNMessage.headerLength)
            let mac = hmacSHA1(key, out)
            try STUNMessage.append(.messageIntegrity(mac), transactionID: transactionID, padding: padding, to: &out)
        }
        if fingerprint {
            STUNMessage.patchLength(&out, to: out.count + 8 - STUNMessage.headerLength)
            let crc = CRC32.checksum(out) ^ STUNMessage.fingerprintXOR
            try STUNMessage.append(.fingerprint(crc), transactionID: transactionID, padding: padding, to: &out)
        }
        STUNMessage.patchLength(&out, to: out.count - STUNMessage.headerLength)
        return out
    }

    /// A Binding success response echoing the request's transaction ID, reporting the
    /// address the request came from (RFC 8489 §7.3.1, ICE RFC 8445 §7.3.1.4).
    public static func bindingSuccess(
        to request: STUNMessage, mappedAddress: STUNAddress, software: String? = nil
    ) -> STUNMessage {
        var attributes: [STUNAttribute] = [.xorMappedAddress(mappedAddress)]
        if let software { attributes.insert(.software(software), at: 0) }
        return STUNMessage(
            type: STUNMessageType(method: request.type.method, messageClass: .successResponse),
            transactionID: request.transactionID, attributes: attributes)
    }

    /// An error response for `request` (RFC 8489 §6.3.4): 400 for malformed requests,
    /// 401 for bad credentials (with REALM/NONCE for long-term auth), 420 with
    /// UNKNOWN-ATTRIBUTES, 487 for an ICE role conflict.
    public static func errorResponse(
        to request: STUNMessage, error: STUNErrorCode, unknownAttributes: [STUNAttributeType] = [],
        realm: String? = nil, nonce: String? = nil, software: String? = nil
    ) -> STUNMessage {
        var attributes: [STUNAttribute] = []
        if let software { attributes.append(.software(software)) }
        attributes.append(.errorCode(error))
        if !unknownAttributes.isEmpty { attributes.append(.unknownAttributes(unknownAttributes)) }
        if let realm { attributes.append(.realm(realm)) }
        if let nonce { attributes.append(.nonce(nonce)) }
        return STUNMessage(
            type: STUNMessageType(method: request.type.method, messageClass: .errorResponse),
            transactionID: request.transactionID, attributes: attributes)
    }
}
