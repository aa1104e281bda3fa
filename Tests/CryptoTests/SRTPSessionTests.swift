import Testing
import COpenSSL
@testable import Crypto
import SRTPReference

/// A minimal RTP packet (RFC 3550 §5.1): V=2, PT 96, the given sequence number and SSRC.
private func rtpPacket(sequence: UInt16, ssrc: UInt32 = 0x1234_5678, payload: [UInt8] = Array(repeating: 0xAB, count: 160))
    -> [UInt8]
{
    [0x80, 96, UInt8(sequence >> 8), UInt8(sequence & 0xFF), 0, 0, 0x0F, 0xA0,
     UInt8(ssrc >> 24), UInt8((ssrc >> 16) & 0xFF), UInt8((ssrc >> 8) & 0xFF), UInt8(ssrc & 0xFF)] + payload
}

/// An RTCP receiver report with one report block (RFC 3550 §6.4.2).
private let rtcpReceiverReport: [UInt8] =
    [0x81, 201, 0, 7, 0xCA, 0xFE, 0xBA, 0xBE] + [UInt8](repeating: 0x11, count: 24)

private func sessions(_ profile: SRTPProfile, window: Int = 128) throws -> (sender: SRTPSession, receiver: SRTPSession) {
    let key = (0..<profile.keyLength).map { UInt8($0 &* 7 &+ 1) }
    let salt = (0..<profile.saltLength).map { UInt8($0 &* 13 &+ 5) }
    let sender = try SRTPSession(profile: profile, key: key, salt: salt, direction: .outbound)
    let receiver = try SRTPSession(profile: profile, key: key, salt: salt, direction: .inbound, replayWindowSize: window)
    return (sender, receiver)
}

@Suite("SRTP session")
struct SRTPSessionTests {
    @Test("RTP survives protect then unprotect", arguments: SRTPProfile.allCases)
    func rtpRoundTrip(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessions(profile)
        for sequence: UInt16 in [0, 1, 2, 65535] {
            let plain = rtpPacket(sequence: sequence)
            var packet = plain
            try sender.protectRTP(&packet)
            #expect(packet.count == plain.count + profile.rtpTrailerLength)
            #expect(packet[0..<12] == plain[0..<12])  // header stays in the clear
            #expect(packet[12..<plain.count] != plain[12...])
            try receiver.unprotectRTP(&packet)
            #expect(packet == plain)
        }
    }

    @Test("RTCP survives protect then unprotect", arguments: SRTPProfile.allCases)
    func rtcpRoundTrip(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessions(profile)
        for _ in 0..<3 {
            var packet = rtcpReceiverReport
            try sender.protectRTCP(&packet)
            #expect(packet.count == rtcpReceiverReport.count + profile.rtcpTrailerLength)
            try receiver.unprotectRTCP(&packet)
            #expect(packet == rtcpReceiverReport)
        }
    }

    @Test("a flipped bit fails authentication", arguments: SRTPProfile.allCases)
    func tamperedPacket(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessions(profile)
        for position in [1, 20, -1] {
            var packet = rtpPacket(sequence: UInt16(100 + position & 0xFF))
            try sender.protectRTP(&packet)
            let index = position >= 0 ? position : packet.count - 1
            packet[index] ^= 0x01
            #expect(throws: SRTPError.authFailure) { try receiver.unprotectRTP(&packet) }
        }
        var rtcp = rtcpReceiverReport
        try sender.protectRTCP(&rtcp)
        rtcp[10] ^= 0x80
        #expect(throws: SRTPError.authFailure) { try receiver.unprotectRTCP(&rtcp) }
    }

    @Test("a replayed packet is rejected", arguments: SRTPProfile.allCases)
    func replayedPacket(profile: SRTPProfile) throws {
        let (sender, receiver) = try sessions(profile)
        var packet = rtpPacket(sequence: 500)
        try sender.protectRTP(&packet)
        var copy = packet
        try receiver.unprotectRTP(&packet)
        #expect(throws: SRTPError.replay) { try receiver.unprotectRTP(&copy) }

        var rtcp = rtcpReceiverReport
        try sender.protectRTCP(&rtcp)
        var rtcpCopy = rtcp
        try receiver.unprotectRTCP(&rtcp)
        #expect(throws: SRTPError.replay) { try receiver.unprotectRTCP(&rtcpCopy) }
    }

    @Test("a 1024-packet replay window accepts late packets a default window drops")
    func widerReplayWindow() throws {
        let (sender, _) = try sessions(.aes128CMSHA1_80)
        let (_, narrow) = try sessions(.aes128CMSHA1_80)
        let (_, wide) = try sessions(.aes128CMSHA1_80, window: 1024)
        var late = rtpPacket(sequence: 1000)
        try sender.protectRTP(&late)
        var current = rtpPacket(sequence: 1600)
        try sender.protectRTP(&current)
        for receiver in [narrow, wide] {
            var packet = current
            try receiver.unprotectRTP(&packet)
        }
        var forNarrow = late, forWide = late
        #expect(throws: SRTPError.replay) { try narrow.unprotectRTP(&forNarrow) }
        try wide.unprotectRTP(&forWide)
        #expect(forWide == rtpPacket(sequence: 1000))
    }

    @Test("protect refuses a buffer without room for the trailer")
    func bufferTooSmall() throws {
        let (sender, _) = try sessions(.aeadAES128GCM)
        var packet = rtpPacket(sequence: 1)
        let length = packet.count
        packet.withUnsafeMutableBytes { raw in
            var used = length
            #expect(throws: SRTPError.bufferTooSmall(needed: length + 16, capacity: length)) {
                try sender.protectRTP(raw.baseAddress!, length: &used, capacity: length)
            }
            #expect(used == length)
        }
    }

    @Test("wrong key or salt lengths and bad windows are rejected")
    func badParameters() {
        #expect(throws: SRTPError.badKeyLength(expected: 16, actual: 15)) {
            try SRTPSession(profile: .aes128CMSHA1_80, key: .init(repeating: 0, count: 15), salt: .init(repeating: 0, count: 14), direction: .inbound)
        }
        #expect(throws: SRTPError.badKeyLength(expected: 12, actual: 14)) {
            try SRTPSession(profile: .aeadAES128GCM, key: .init(repeating: 0, count: 16), salt: .init(repeating: 0, count: 14), direction: .inbound)
        }
        #expect(throws: SRTPError.self) {
            try SRTPSession(profile: .aes128CMSHA1_80, key: .init(repeating: 0, count: 16), salt: .init(repeating: 0, count: 14), direction: .inbound, replayWindowSize: 10)
        }
    }

    @Test("sessions built from DTLS keys talk to each other crosswise")
    func sessionsFromKeys() throws {
        var link = try DTLSLink()
        link.run()
        let profile = try #require(link.client.srtpProfile)
        let clientOut = try SRTPSession.outbound(keys: try #require(link.client.srtpKeys), profile: profile)
        let serverIn = try SRTPSession.inbound(keys: try #require(link.server.srtpKeys), profile: profile, replayWindowSize: 1024)
        let serverOut = try SRTPSession.outbound(keys: try #require(link.server.srtpKeys), profile: profile)
        let clientIn = try SRTPSession.inbound(keys: try #require(link.client.srtpKeys), profile: profile)
        var a = rtpPacket(sequence: 7)
        try clientOut.protectRTP(&a)
        try serverIn.unprotectRTP(&a)
        #expect(a == rtpPacket(sequence: 7))
        var b = rtcpReceiverReport
        try serverOut.protectRTCP(&b)
        try clientIn.unprotectRTCP(&b)
        #expect(b == rtcpReceiverReport)
        // A session keyed for the other direction cannot read it.
        var c = rtpPacket(sequence: 8)
        try clientOut.protectRTP(&c)
        #expect(throws: SRTPError.authFailure) { try clientIn.unprotectRTP(&c) }
    }

    @Test("the same RTP packet can be protected again for a NACK resend")
    func repeatedTransmitAllowedOutbound() throws {
        let (sender, _) = try sessions(.aes128CMSHA1_80)
        var first = rtpPacket(sequence: 42), second = rtpPacket(sequence: 42)
        try sender.protectRTP(&first)
        try sender.protectRTP(&second)
        #expect(first == second)
    }
}

/// Known answers: RFC 3711 Appendix B inputs, the output libsrtp's own validation checks
/// (`srtp_validate`), and the same bytes recomputed here from the RFC 3711 algorithms with
/// OpenSSL AES-CTR and HMAC-SHA1, independently of libsrtp.
@Suite("SRTP known answers")
struct SRTPKnownAnswerTests {
    static let masterKey: [UInt8] = hex("E1F97A0D3E018BE0D64FA32C06DE4139")
    static let masterSalt: [UInt8] = hex("0EC675AD498AFEEBB6960B3AABE6")
    static let rtpPlain: [UInt8] = hex("800F1234DECAFBADCAFEBABE") + [UInt8](repeating: 0xAB, count: 16)
    static let srtpExpected: [UInt8] = hex(
        "800F1234DECAFBADCAFEBABE4E55DC4CE79978D88CA4D215949D2402B78D6ACC99EA179B8DBB")
    static let rtcpPlain: [UInt8] = hex("81C8000BCAFEBABE") + [UInt8](repeating: 0xAB, count: 16)
    static let srtcpExpected: [UInt8] = hex(
        "81C8000BCAFEBABE7128035BE487B9BDBEF89041F977A5A880000001993E08CD54D6C1230798")

    @Test("AES_CM_128_HMAC_SHA1_80 protects the RFC 3711 vector to libsrtp's known answer")
    func rtpKnownAnswer() throws {
        let session = try SRTPSession(profile: .aes128CMSHA1_80, key: Self.masterKey, salt: Self.masterSalt, direction: .outbound)
        var packet = Self.rtpPlain
        try session.protectRTP(&packet)
        #expect(packet == Self.srtpExpected)

        let receiver = try SRTPSession(profile: .aes128CMSHA1_80, key: Self.masterKey, salt: Self.masterSalt, direction: .inbound)
        try receiver.unprotectRTP(&packet)
        #expect(packet == Self.rtpPlain)
    }

    @Test("SRTCP protects the same key's RTCP vector to libsrtp's known answer")
    func rtcpKnownAnswer() throws {
        let session = try SRTPSession(profile: .aes128CMSHA1_80, key: Self.masterKey, salt: Self.masterSalt, direction: .outbound)
        var packet = Self.rtcpPlain
        try session.protectRTCP(&packet)
        #expect(packet == Self.srtcpExpected)
    }

    @Test("RFC 3711 B.3 key derivation reproduces the published session keys")
    func keyDerivation() {
        #expect(deriveSessionKey(label: 0, length: 16) == hex("C61E7A93744F39EE10734AFE3FF7A087"))
        #expect(deriveSessionKey(label: 2, length: 14) == hex("30CBBC08863D8C85D49DB34A9AE1"))
        #expect(deriveSessionKey(label: 1, length: 20) == hex("CEBE321F6FF7716B6FD4AB49AF256A156D38BAA4"))
    }

    @Test("an independent AES-CTR + HMAC-SHA1 computation matches libsrtp")
    func independentComputation() throws {
        let encryptionKey = deriveSessionKey(label: 0, length: 16)
        let authKey = deriveSessionKey(label: 1, length: 20)
        let sessionSalt = deriveSessionKey(label: 2, length: 14)
        let ssrc: [UInt8] = Array(Self.rtpPlain[8..<12])
        let sequence: [UInt8] = Array(Self.rtpPlain[2..<4])
        // RFC 3711 §4.1.1: IV = (k_s * 2^16) XOR (SSRC * 2^64) XOR (i * 2^16), ROC 0.
        var iv = sessionSalt + [0, 0]
        for i in 0..<4 { iv[4 + i] ^= ssrc[i] }
        iv[12] ^= sequence[0]
        iv[13] ^= sequence[1]
        let payload = Array(Self.rtpPlain[12...])
        let ciphertext = aesCTR(key: encryptionKey, iv: iv, input: payload)
        let authenticated = Array(Self.rtpPlain[0..<12]) + ciphertext
        // RFC 3711 §4.2: HMAC-SHA1 over the packet and the 32-bit ROC, truncated to 80 bits.
        let tag = Array(hmacSHA1(key: authKey, data: authenticated + [0, 0, 0, 0]).prefix(10))
        #expect(authenticated + tag == Self.srtpExpected)

        let session = try SRTPSession(profile: .aes128CMSHA1_80, key: Self.masterKey, salt: Self.masterSalt, direction: .outbound)
        var other = Array(Self.rtpPlain[0..<2]) + [0x00, 0x07] + Array(Self.rtpPlain[4...])
        try session.protectRTP(&other)
        var iv7 = sessionSalt + [0, 0]
        for i in 0..<4 { iv7[4 + i] ^= ssrc[i] }
        iv7[13] ^= 0x07
        let c7 = aesCTR(key: encryptionKey, iv: iv7, input: payload)
        let a7 = Array(other[0..<12]) + c7
        #expect(other == a7 + Array(hmacSHA1(key: authKey, data: a7 + [0, 0, 0, 0]).prefix(10)))
    }

    /// RFC 3711 §4.3.1 with kdr 0: AES-CM(master key, (label << 48 XOR salt) * 2^16).
    private func deriveSessionKey(label: UInt8, length: Int) -> [UInt8] {
        var iv = Self.masterSalt + [0, 0]
        iv[7] ^= label
        return aesCTR(key: Self.masterKey, iv: iv, input: [UInt8](repeating: 0, count: length))
    }
}

private func aesCTR(key: [UInt8], iv: [UInt8], input: [UInt8]) -> [UInt8] {
    guard let ctx = EVP_CIPHER_CTX_new() else { return [] }
    defer { EVP_CIPHER_CTX_free(ctx) }
    var out = [UInt8](repeating: 0, count: input.count + 16)
    var length: Int32 = 0
    guard EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), nil, key, iv) == 1,
        EVP_EncryptUpdate(ctx, &out, &length, input, Int32(input.count)) == 1
    else { return [] }
    return Array(out.prefix(Int(length)))
}

private func hmacSHA1(key: [UInt8], data: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: 20)
    var length: UInt32 = 0
    _ = HMAC(EVP_sha1(), key, Int32(key.count), data, data.count, &out, &length)
    return Array(out.prefix(Int(length)))
}

private func hex(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    var iterator = text.utf8.makeIterator()
    while let hi = iterator.next(), let lo = iterator.next() {
        let value = { (c: UInt8) -> UInt8 in c <= 57 ? c - 48 : (c | 0x20) - 87 }
        bytes.append(value(hi) << 4 | value(lo))
    }
    return bytes
}
