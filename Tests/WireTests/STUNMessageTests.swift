import Testing
@testable import Wire

/// RFC 5769 §2 test vectors.
enum RFC5769 {
    static let transactionID = STUNTransactionID(bytes: hexBytes("b7e7a701 bc34d686 fa87dfae"))!
    static let password = Array("VOkJxbRl1RmTxUk/WvJxBt".utf8)

    static let sampleRequest = hexBytes("""
        00010058 2112a442 b7e7a701 bc34d686 fa87dfae
        80220010 5354554e 20746573 7420636c 69656e74
        00240004 6e0001ff
        80290008 932ff9b1 51263b36
        00060009 6576746a 3a683676 59202020
        00080014 9aeaa70c bfd8cb56 781ef2b5 b2d3f249 c1b571a2
        80280004 e57a3bcf
        """)

    static let ipv4Response = hexBytes("""
        0101003c 2112a442 b7e7a701 bc34d686 fa87dfae
        8022000b 74657374 20766563 746f7220
        00200008 0001a147 e112a643
        00080014 2b91f599 fd9e90c3 8c7489f9 2af9ba53 f06be7d7
        80280004 c07d4c96
        """)

    static let ipv6Response = hexBytes("""
        01010048 2112a442 b7e7a701 bc34d686 fa87dfae
        8022000b 74657374 20766563 746f7220
        00200014 0002a147 0113a9fa a5d3f179 bc25f4b5 bed2b9d9
        00080014 a382954e 4be67bf1 1784c97c 8292c275 bfe3ed41
        80280004 c8fb0b4c
        """)

    static let longTermRequest = hexBytes("""
        00010060 2112a442 78ad3433 c6ad72c0 29da412e
        00060012 e3839ee3 8388e383 aae38383 e382afe3 82b90000
        0015001c 662f2f34 39396b39 35346436 4f4c3334 6f4c3946 53547679 36347341
        0014000b 6578616d 706c652e 6f726700
        00080014 f6702465 6dd64a3e 02b8e071 2e85c9a2 8ca89666
        """)
    /// MD5("マトリックス:example.org:TheMatrIX"), the long-term key (RFC 8489 §9.2.2).
    static let longTermKey = hexBytes("e8ca7ad59d5eb0518e312911d2dab2a9")
}

@Suite("STUN messages")
struct STUNMessageTests {
    let hmac: STUNHMACSHA1 = { TestSHA1.hmac(key: $0, data: $1) }

    @Test("test SHA-1 matches FIPS 180 'abc' digest")
    func sha1Sanity() {
        #expect(TestSHA1.hash(Array("abc".utf8)) == hexBytes("a9993e364706816aba3e25717850c26c9cd0d89d"))
    }

    @Test("RFC 5769 sample request parses, verifies and re-encodes byte for byte")
    func sampleRequest() throws {
        let bytes = RFC5769.sampleRequest
        let message = try STUNMessage.parse(bytes)
        #expect(message.type == .bindingRequest)
        #expect(message.transactionID == RFC5769.transactionID)
        #expect(message.attributes.first == .software("STUN test client"))
        #expect(message.priority == 0x6E00_01FF)
        #expect(message.username == "evtj:h6vY")
        #expect(message.iceRole?.controlling == false)
        #expect(message.iceRole?.tieBreaker == 0x932F_F9B1_5126_3B36)
        #expect(message.integrityOffset == 76)
        #expect(message.fingerprintOffset == 100)
        #expect(message.verifyIntegrity(in: bytes, key: RFC5769.password, hmacSHA1: hmac))
        #expect(!message.verifyIntegrity(in: bytes, key: Array("wrong".utf8), hmacSHA1: hmac))
        #expect(message.verifyFingerprint(in: bytes))
        #expect(try message.serialize(padding: 0x20) == bytes)

        let rebuilt = STUNMessage(type: .bindingRequest, transactionID: RFC5769.transactionID, attributes: [
            .software("STUN test client"), .priority(0x6E00_01FF), .iceControlled(tieBreaker: 0x932F_F9B1_5126_3B36),
            .username("evtj:h6vY"),
        ])
        let signed = try rebuilt.serialize(integrityKey: RFC5769.password, hmacSHA1: hmac, fingerprint: true, padding: 0x20)
        #expect(signed == bytes)
    }

    @Test("RFC 5769 IPv4 response decodes 192.0.2.1:32853 and re-signs identically")
    func ipv4Response() throws {
        let bytes = RFC5769.ipv4Response
        let message = try STUNMessage.parse(bytes)
        #expect(message.type == .bindingSuccess)
        #expect(message.xorMappedAddress == STUNAddress("192.0.2.1", port: 32853))
        #expect(message.xorMappedAddress?.description == "192.0.2.1:32853")
        #expect(message.verifyIntegrity(in: bytes, key: RFC5769.password, hmacSHA1: hmac))
        #expect(message.verifyFingerprint(in: bytes))
        let rebuilt = STUNMessage(type: .bindingSuccess, transactionID: RFC5769.transactionID, attributes: [
            .software("test vector"), .xorMappedAddress(.ipv4(0xC000_0201, port: 32853)),
        ])
        #expect(try rebuilt.serialize(integrityKey: RFC5769.password, hmacSHA1: hmac, fingerprint: true, padding: 0x20) == bytes)
    }

    @Test("RFC 5769 IPv6 response decodes 2001:db8:1234:5678:11:2233:4455:6677 and re-signs identically")
    func ipv6Response() throws {
        let bytes = RFC5769.ipv6Response
        let message = try STUNMessage.parse(bytes)
        let expected = STUNAddress("2001:db8:1234:5678:11:2233:4455:6677", port: 32853)
        #expect(expected != nil)
        #expect(message.xorMappedAddress == expected)
        #expect(message.xorMappedAddress?.description == "[2001:db8:1234:5678:11:2233:4455:6677]:32853")
        #expect(message.verifyIntegrity(in: bytes, key: RFC5769.password, hmacSHA1: hmac))
        #expect(message.verifyFingerprint(in: bytes))
        #expect(try message.serialize(integrityKey: RFC5769.password, hmacSHA1: hmac, fingerprint: true, padding: 0x20) == bytes)
    }

    @Test("RFC 5769 long-term request carries USERNAME, NONCE, REALM and verifies with the MD5 key")
    func longTermRequest() throws {
        let bytes = RFC5769.longTermRequest
        let message = try STUNMessage.parse(bytes)
        #expect(message.transactionID == STUNTransactionID(bytes: hexBytes("78ad3433 c6ad72c0 29da412e")))
        #expect(message.username == "\u{30DE}\u{30C8}\u{30EA}\u{30C3}\u{30AF}\u{30B9}")
        #expect(message.attributes.contains(.nonce("f//499k954d6OL34oL9FSTvy64sA")))
        #expect(message.attributes.contains(.realm("example.org")))
        #expect(message.fingerprintOffset == nil)
        #expect(!message.verifyFingerprint(in: bytes))
        #expect(message.verifyIntegrity(in: bytes, key: RFC5769.longTermKey, hmacSHA1: hmac))
        #expect(try message.serialize(integrityKey: RFC5769.longTermKey, hmacSHA1: hmac, fingerprint: false) == bytes)
    }

    @Test("a flipped bit breaks the fingerprint")
    func fingerprintDetectsCorruption() throws {
        var bytes = RFC5769.sampleRequest
        bytes[30] ^= 0x01
        let message = try STUNMessage.parse(bytes)
        #expect(!message.verifyFingerprint(in: bytes))
        #expect(!message.verifyIntegrity(in: bytes, key: RFC5769.password, hmacSHA1: hmac))
    }

    @Test("message type packs method and class bits", arguments: [
        (STUNMessageType.bindingRequest, 0x0001), (.bindingSuccess, 0x0101), (.bindingError, 0x0111),
        (.bindingIndication, 0x0011), (STUNMessageType(method: .allocate, messageClass: .request), 0x0003),
        (STUNMessageType(method: STUNMethod(rawValue: 0xFFF), messageClass: .errorResponse), 0x3FFF),
    ])
    func messageType(type: STUNMessageType, raw: Int) {
        #expect(Int(type.rawValue) == raw)
        #expect(STUNMessageType(rawValue: UInt16(raw)) == type)
    }

    @Test("error responses carry code, reason and echo the transaction", arguments: [
        STUNErrorCode.badRequest, .unauthorized, .roleConflict,
    ])
    func errorResponse(code: STUNErrorCode) throws {
        let request = try STUNMessage.parse(RFC5769.sampleRequest)
        let response = STUNMessage.errorResponse(to: request, error: code, realm: code.code == 401 ? "example.org" : nil)
        let bytes = try response.serialize(integrityKey: nil, fingerprint: true)
        let parsed = try STUNMessage.parse(bytes)
        #expect(parsed.type == .bindingError)
        #expect(parsed.transactionID == request.transactionID)
        #expect(parsed.errorCode == code)
        #expect(parsed.verifyFingerprint(in: bytes))
        // Class in byte 2, number in byte 3 of the value (RFC 8489 §14.8).
        #expect(bytes[24 + 2] == UInt8(code.code / 100) && bytes[24 + 3] == UInt8(code.code % 100))
    }

    @Test("420 lists the unknown comprehension-required attributes")
    func unknownAttributes() throws {
        var request = try STUNMessage.parse(RFC5769.sampleRequest)
        request.attributes.append(.other(type: STUNAttributeType(0x7777), value: [1, 2, 3]))
        #expect(request.unknownComprehensionRequired == [STUNAttributeType(0x7777)])
        let response = STUNMessage.errorResponse(to: request, error: .unknownAttribute,
                                                 unknownAttributes: request.unknownComprehensionRequired)
        let parsed = try STUNMessage.parse(try response.serialize())
        #expect(parsed.attributes.contains(.unknownAttributes([STUNAttributeType(0x7777)])))
    }

    @Test("binding success round-trips MAPPED-ADDRESS and XOR-MAPPED-ADDRESS for both families")
    func addressesRoundTrip() throws {
        let id = STUNTransactionID(word0: 1, word1: 2, word2: 3)
        let v6 = STUNAddress("fe80::1", port: 9)!
        let message = STUNMessage(type: .bindingSuccess, transactionID: id, attributes: [
            .mappedAddress(.ipv4(0x0A00_0001, port: 5000)), .xorMappedAddress(v6), .xorMappedAddress(.ipv4(0x7F00_0001, port: 1)),
            .useCandidate, .iceControlling(tieBreaker: 42),
        ])
        let parsed = try STUNMessage.parse(try message.serialize())
        #expect(parsed.attributes == message.attributes)
        #expect(v6.host == "fe80::1")
    }

    @Test("malformed datagrams produce precise errors", arguments: [
        ([UInt8](repeating: 0, count: 7), STUNError.truncated(needed: 20, available: 7)),
        (hexBytes("c0010000 2112a442 000000000000000000000000"), .notSTUN(firstByte: 0xC0)),
        (hexBytes("00010000 2112a443 000000000000000000000000"), .badMagicCookie(0x2112_A443)),
        (hexBytes("00010002 2112a442 000000000000000000000000 0000"), .unalignedLength(2)),
        (hexBytes("00010008 2112a442 000000000000000000000000 00060004"), .lengthMismatch(declared: 8, available: 4)),
        (hexBytes("00010008 2112a442 000000000000000000000000 00060008 41414141"),
         .attributeOverrun(type: 6, offset: 20, length: 8)),
    ])
    func malformed(bytes: [UInt8], error: STUNError) {
        #expect(throws: error) { try STUNMessage.parse(bytes) }
    }

    @Test("invalid UTF-8 and odd-sized values are kept raw so they re-encode unchanged")
    func rawFallback() throws {
        let bytes = hexBytes("00010010 2112a442 000000000000000000000000 00060002 ff fe 0000 00240002 0102 0000")
        let message = try STUNMessage.parse(bytes)
        #expect(message.attributes == [.other(type: .username, value: [0xFF, 0xFE]), .other(type: .priority, value: [1, 2])])
        #expect(try message.serialize() == bytes)
    }
}

@Suite("STUN packet demultiplexing")
struct STUNDemuxTests {
    @Test("first byte picks the protocol (RFC 7983)", arguments: [
        (UInt8(0), UInt8(1), PacketKind.stun), (3, 0, .stun), (4, 0, .unknown), (17, 0, .zrtp), (20, 0, .dtls),
        (22, 254, .dtls), (63, 0, .dtls), (64, 0, .turnChannel), (128, 96, .rtp), (0x90, 0xE0, .rtp),
        (0x80, 200, .rtcp), (0x81, 205, .rtcp), (0x81, 223, .rtcp), (0x81, 224, .rtp), (191, 111, .rtp), (192, 0, .unknown),
    ])
    func classify(first: UInt8, second: UInt8, kind: PacketKind) {
        #expect(PacketDemux.classify(first, second) == kind)
        #expect(PacketDemux.classify([first, second]) == kind)
    }

    @Test("STUN sniffing needs the magic cookie")
    func sniff() {
        #expect(RFC5769.sampleRequest.withUnsafeBytes { STUNMessage.isSTUN($0) })
        #expect(![UInt8](repeating: 0, count: 20).withUnsafeBytes { STUNMessage.isSTUN($0) })
        #expect(STUNMessage.isSTUN(firstByte: 1))
        #expect(PacketDemux.classify([UInt8]()) == .unknown)
    }
}

@Suite("CRC-32")
struct CRC32Tests {
    @Test("matches the IEEE check value for \"123456789\"")
    func checkValue() {
        #expect(CRC32.checksum(Array("123456789".utf8)) == 0xCBF4_3926)
        #expect(CRC32.checksum([UInt8]()) == 0)
        let a = Array("1234".utf8), b = Array("56789".utf8)
        #expect(b.withUnsafeBytes { CRC32.update(CRC32.checksum(a), $0) } == 0xCBF4_3926)
    }
}
