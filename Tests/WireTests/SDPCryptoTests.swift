import Testing
@testable import Wire

@Suite("SDES a=crypto (RFC 4568)")
struct SDPCryptoTests {
    @Test("the RFC's example line: tag, suite, key, lifetime, MKI; written back as read")
    func rfcExample() throws {
        let text = "1 AES_CM_128_HMAC_SHA1_80 inline:PS1uQCVeeCFCanVmcjkpPywjNWhcYD0mXXtxaVBR|2^20|1:4"
        let line = try #require(SDPCrypto(attributeValue: text))
        #expect(line.tag == 1 && line.suite == "AES_CM_128_HMAC_SHA1_80" && line.keySalt.count == 30)
        #expect(line.lifetime == "2^20" && line.mki == "1:4" && line.sessionParameters.isEmpty)
        #expect(line.mkiBytes == [0, 0, 0, 1])
        #expect(line.attributeValue == text)
    }

    @Test("an MKI's bytes: its value big-endian in its length; nil when malformed or too large for its length", arguments: [
        ("1:1", [UInt8(1)]), ("258:2", [1, 2]), ("4294967295:4", [255, 255, 255, 255]), ("7:10", [0, 0, 0, 0, 0, 0, 0, 0, 0, 7]),
        ("256:1", nil), ("1:0", nil), ("1:129", nil), ("x:1", nil), ("1:x", nil), ("-1:1", nil), ("1:2:3", nil),
        ("99999999999999999999:8", nil), ("１:1", nil),
    ] as [(String, [UInt8]?)])
    func mkiBytes(mki: String, bytes: [UInt8]?) {
        #expect(SDPCrypto(tag: 1, suite: "AES_CM_128_HMAC_SHA1_80", keySalt: [1], mki: mki).mkiBytes == bytes)
        #expect(SDPCrypto(tag: 1, suite: "AES_CM_128_HMAC_SHA1_80", keySalt: [1]).mkiBytes == nil)
    }

    @Test("session parameters are kept; a 28-byte GCM key is padded base64")
    func parameters() throws {
        let line = SDPCrypto(tag: 2, suite: "AEAD_AES_128_GCM", keySalt: Array(0..<28), sessionParameters: ["WSH=128"])
        let back = try #require(SDPCrypto(attributeValue: line.attributeValue))
        #expect(back == line && line.attributeValue.hasSuffix("= WSH=128"))
    }

    @Test("malformed lines are nil, never a crash", arguments: [
        "", "1", "1 AES_CM_128_HMAC_SHA1_80", "x AES_CM_128_HMAC_SHA1_80 inline:AAAA", "-1 AES_CM_128_HMAC_SHA1_80 inline:AAAA",
        "1 AES_CM_128_HMAC_SHA1_80 key:AAAA", "1 AES_CM_128_HMAC_SHA1_80 inline:", "1 AES_CM_128_HMAC_SHA1_80 inline:!!!!",
        "1 AES_CM_128_HMAC_SHA1_80 inline:AAAA|1|2|3", "99999999999999999999 S inline:AAAA",
    ])
    func malformed(text: String) {
        #expect(SDPCrypto(attributeValue: text) == nil)
    }
}
