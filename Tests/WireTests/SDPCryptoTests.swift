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
        #expect(line.attributeValue == text)
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
