import Testing
import COpenSSL
@testable import Crypto

@Suite("DTLS certificate")
struct DTLSCertificateTests {
    @Test("the SDP fingerprint is 32 uppercase hex pairs joined by colons")
    func fingerprintFormat() throws {
        let certificate = try DTLSCertificate()
        let parts = certificate.fingerprintSHA256.split(separator: ":")
        #expect(parts.count == 32)
        #expect(parts.allSatisfy { $0.count == 2 && $0.allSatisfy { "0123456789ABCDEF".contains($0) } })
        #expect(DTLSCertificate.fingerprint(ofDER: certificate.der) == certificate.fingerprintSHA256)
        #expect(DTLSCertificate.fingerprint(ofDER: certificate.der, algorithm: "SHA-1")?.split(separator: ":").count == 20)
        #expect(DTLSCertificate.fingerprint(ofDER: certificate.der, algorithm: "md2") == nil)
    }

    @Test("each certificate has its own key, serial and fingerprint")
    func distinctCertificates() throws {
        let a = try DTLSCertificate(), b = try DTLSCertificate()
        #expect(a.fingerprintSHA256 != b.fingerprintSHA256)
        #expect(serial(of: a) != serial(of: b))
    }

    @Test("the certificate is a P-256 ECDSA self-signed X.509 v3 valid now")
    func certificateContents() throws {
        let certificate = try DTLSCertificate(commonName: "switchboard")
        let x509 = certificate.certificate
        #expect(X509_get_version(x509) == 2)
        #expect(X509_check_issued(x509, x509) == X509_V_OK)
        #expect(X509_cmp_current_time(X509_get0_notBefore(x509)) < 0)
        #expect(X509_cmp_current_time(X509_get0_notAfter(x509)) > 0)
        let key = try #require(X509_get0_pubkey(x509))
        #expect(EVP_PKEY_get_base_id(key) == EVP_PKEY_EC)
        #expect(EVP_PKEY_get_bits(key) == 256)
        #expect(X509_verify(x509, key) == 1)
        var buffer = [CChar](repeating: 0, count: 64)
        let length = X509_NAME_get_text_by_NID(X509_get_subject_name(x509), NID_commonName, &buffer, 64)
        #expect(String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "switchboard")
    }

    @Test("fingerprint text parses in either case and rejects malformed input")
    func fingerprintParsing() {
        #expect(DTLSFingerprint.parse("AB:cd:0F") == [0xAB, 0xCD, 0x0F])
        #expect(DTLSFingerprint.parse("") == nil)
        #expect(DTLSFingerprint.parse("ABC") == nil)
        #expect(DTLSFingerprint.parse("AB::CD") == nil)
        #expect(DTLSFingerprint.parse("AB:CG") == nil)
        #expect(DTLSFingerprint.format([0x00, 0xFF, 0x1A]) == "00:FF:1A")
        #expect(DTLSFingerprint.matches([1, 2], expected: [1, 2]))
        #expect(!DTLSFingerprint.matches([1, 2], expected: [1, 3]))
        #expect(!DTLSFingerprint.matches([1, 2], expected: [1, 2, 3]))
    }

    private func serial(of certificate: DTLSCertificate) -> [UInt8] {
        guard let integer = X509_get0_serialNumber(certificate.certificate) else { return [] }
        let bn = ASN1_INTEGER_to_BN(integer, nil)
        defer { BN_free(bn) }
        var out = [UInt8](repeating: 0, count: 32)
        let n = BN_bn2bin(bn, &out)
        return Array(out.prefix(Int(n)))
    }
}

@Suite("DTLS record packer")
struct DTLSRecordPackerTests {
    private func record(_ length: Int, type: UInt8 = 22) -> [UInt8] {
        [type, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 1, UInt8(length >> 8), UInt8(length & 0xFF)]
            + [UInt8](repeating: 0x5A, count: length)
    }

    @Test("records are packed greedily up to the MTU")
    func packsGreedily() {
        let stream = record(100) + record(100) + record(1000) + record(50)
        let datagrams = DTLSRecordPacker.datagrams(from: stream, mtu: 1200)
        #expect(datagrams.map(\.count) == [226, 1013 + 63])
        #expect(datagrams.joined().elementsEqual(stream))
    }

    @Test("a record larger than the MTU travels alone")
    func oversizedRecordAlone() {
        let stream = record(10) + record(1300) + record(10)
        #expect(DTLSRecordPacker.datagrams(from: stream, mtu: 1200).map(\.count) == [23, 1313, 23])
    }

    @Test("a truncated tail is kept, not lost")
    func truncatedTail() {
        let stream = record(10) + [22, 0xFE, 0xFD]
        let datagrams = DTLSRecordPacker.datagrams(from: stream, mtu: 1200)
        #expect(datagrams == [record(10), [22, 0xFE, 0xFD]])
        #expect(DTLSRecordPacker.datagrams(from: [], mtu: 1200).isEmpty)
    }
}
