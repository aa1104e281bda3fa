/// One `a=crypto` attribute: SDES keying for SRTP (RFC 4568 §9.1).
///
/// ```
/// a=crypto:<tag> <crypto-suite> inline:<base64 key||salt>[|<lifetime>][|<MKI>:<length>] [<session-param>]...
/// a=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:4
/// ```
///
/// Only the first inline key of a line is kept (RFC 4568 allows several, told apart by their MKIs, which
/// their sender puts in every packet).
public struct SDPCrypto: Hashable, Sendable {
    /// Identifies the line in the offer; the answer repeats the tag it accepts (RFC 4568 §5.1).
    public var tag: Int
    public var suite: String
    /// The decoded inline key: master key then master salt.
    public var keySalt: [UInt8]
    /// `2^20`-style lifetime as written, if any (informational: keys are replaced by re-offer).
    public var lifetime: String?
    /// `MKI:length` as written, if any.
    public var mki: String?
    /// Session parameters (`UNENCRYPTED_SRTP`, `KDR=…`, `WSH=…`, …) as written.
    public var sessionParameters: [String]

    public init(tag: Int, suite: String, keySalt: [UInt8], lifetime: String? = nil, mki: String? = nil, sessionParameters: [String] = []) {
        self.tag = tag
        self.suite = suite
        self.keySalt = keySalt
        self.lifetime = lifetime
        self.mki = mki
        self.sessionParameters = sessionParameters
    }

    /// Parses the attribute's value (what follows `a=crypto:`); nil when it is malformed.
    public init?(attributeValue value: String) {
        let fields = value.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 3, let tag = Int(fields[0]), (0...999_999_999).contains(tag), fields[1].count <= 64 else { return nil }
        let keyParams = fields[2].split(separator: ";")
        guard let first = keyParams.first, first.hasPrefix("inline:") else { return nil }
        let parts = first.dropFirst("inline:".count).split(separator: "|", omittingEmptySubsequences: false)
        guard let encoded = parts.first, (1...128).contains(encoded.count), parts.count <= 3,
              let keySalt = Base64.decode(String(encoded)), !keySalt.isEmpty else { return nil }
        var lifetime: String?
        var mki: String?
        for part in parts.dropFirst() {
            if part.contains(":") { mki = String(part) } else { lifetime = String(part) }
        }
        self.init(tag: tag, suite: String(fields[1]), keySalt: keySalt, lifetime: lifetime, mki: mki,
                  sessionParameters: fields.dropFirst(3).map(String.init))
    }

    /// The MKI as the bytes packets carry: its decimal value big-endian in `length` bytes (RFC 4568 §6.1, 1–128);
    /// nil without one, or when it is malformed or its value does not fit its length (here at most 8 bytes' worth).
    public var mkiBytes: [UInt8]? {
        guard let mki else { return nil }
        let parts = mki.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count <= 20, parts[0].allSatisfy(\.isASCII), parts[0].allSatisfy(\.isNumber),
              let value = UInt64(parts[0]), let length = Int(parts[1]), (1...128).contains(length),
              length >= 8 || value >> UInt64(8 * length) == 0 else { return nil }
        return (0..<length).map { i in
            let shift = 8 * (length - 1 - i)
            return shift < 64 ? UInt8(truncatingIfNeeded: value >> UInt64(shift)) : 0
        }
    }

    public var attributeValue: String {
        var key = "inline:" + Base64.encode(keySalt)
        if let lifetime { key += "|" + lifetime }
        if let mki { key += "|" + mki }
        return ([String(tag), suite, key] + sessionParameters).joined(separator: " ")
    }
}
