import Testing
import COpenSSL
@testable import Crypto

@Suite("DTLS record filter")
struct DTLSRecordFilterTests {
    /// One case of the pure record screen: a datagram, the engine's state, and the verdict.
    struct ScreenCase: Sendable, CustomTestStringConvertible {
        let name: String
        let filter: DTLSRecordFilter
        let datagram: [UInt8]
        let accepted: [Range<Int>]
        let discarded: [DTLSRecordError]
        var testDescription: String { name }

        static let handshaking = DTLSRecordFilter(acceptsPlaintext: true, protection: nil)
        static let gcm = DTLSRecordProtection.aead(explicitNonceLength: 8, tagLength: 16)
        static let keyed = DTLSRecordFilter(acceptsPlaintext: true, protection: gcm)
        static let connected = DTLSRecordFilter(acceptsPlaintext: false, protection: gcm)
        static func record(_ type: UInt8, epoch: UInt16, count: Int, version: UInt16 = 0xFEFD) -> [UInt8] {
            dtlsRecord(type, epoch: epoch, [UInt8](repeating: 1, count: count), version: version)
        }

        static let all: [ScreenCase] = [
            ScreenCase(
                name: "ClientHello-sized handshake record", filter: handshaking,
                datagram: record(22, epoch: 0, count: 150), accepted: [0..<163], discarded: []),
            ScreenCase(
                name: "DTLS 1.0 record version in epoch 0", filter: handshaking,
                datagram: record(22, epoch: 0, count: 150, version: 0xFEFF), accepted: [0..<163], discarded: []),
            ScreenCase(
                name: "TLS record version", filter: handshaking,
                datagram: record(22, epoch: 0, count: 150, version: 0x0303), accepted: [],
                discarded: [.unsupportedVersion(0x0303)]),
            ScreenCase(
                name: "epoch 1 before any suite is negotiated", filter: handshaking,
                datagram: record(21, epoch: 1, count: 26), accepted: [], discarded: [.unexpectedEpoch(1)]),
            ScreenCase(
                name: "ChangeCipherSpec and Finished in one datagram", filter: keyed,
                datagram: record(20, epoch: 0, count: 1) + record(22, epoch: 1, count: 48),
                accepted: [0..<14, 14..<75], discarded: []),
            ScreenCase(
                name: "encrypted alert of genuine size", filter: keyed,
                datagram: record(21, epoch: 1, count: 26), accepted: [0..<39], discarded: []),
            ScreenCase(
                name: "epoch-1 alert shorter than AES-GCM's nonce and tag", filter: keyed,
                datagram: record(21, epoch: 1, count: 2), accepted: [],
                discarded: [.shorterThanProtection(length: 2, minimum: 24)]),
            ScreenCase(
                name: "epoch-1 record with DTLS 1.0 version", filter: keyed,
                datagram: record(23, epoch: 1, count: 40, version: 0xFEFF), accepted: [],
                discarded: [.unsupportedVersion(0xFEFF)]),
            ScreenCase(
                name: "ChangeCipherSpec in epoch 1", filter: keyed,
                datagram: record(20, epoch: 1, count: 26), accepted: [],
                discarded: [.contentTypeNotInEpoch(contentType: 20, epoch: 1)]),
            ScreenCase(
                name: "junk between two good records", filter: handshaking,
                datagram: record(22, epoch: 0, count: 12) + record(25, epoch: 0, count: 4)
                    + record(22, epoch: 0, count: 12),
                accepted: [0..<25, 42..<67], discarded: [.unknownContentType(25)]),
            ScreenCase(
                name: "plaintext application data", filter: handshaking,
                datagram: record(23, epoch: 0, count: 4), accepted: [],
                discarded: [.contentTypeNotInEpoch(contentType: 23, epoch: 0)]),
            ScreenCase(
                name: "plaintext alert of 3 bytes", filter: handshaking,
                datagram: record(21, epoch: 0, count: 3), accepted: [],
                discarded: [.invalidPlaintextLength(contentType: 21, length: 3)]),
            ScreenCase(
                name: "plaintext ChangeCipherSpec of 2 bytes", filter: keyed,
                datagram: record(20, epoch: 0, count: 2), accepted: [],
                discarded: [.invalidPlaintextLength(contentType: 20, length: 2)]),
            ScreenCase(
                name: "empty handshake record", filter: handshaking,
                datagram: record(22, epoch: 0, count: 0), accepted: [],
                discarded: [.invalidPlaintextLength(contentType: 22, length: 0)]),
            ScreenCase(
                name: "epoch 0 once connected", filter: connected,
                datagram: record(22, epoch: 0, count: 12) + record(23, epoch: 1, count: 40),
                accepted: [25..<78], discarded: [.unexpectedEpoch(0)]),
            ScreenCase(
                name: "epoch 2", filter: connected,
                datagram: record(23, epoch: 2, count: 40), accepted: [], discarded: [.unexpectedEpoch(2)]),
            ScreenCase(
                name: "longer than any ciphertext", filter: connected,
                datagram: record(23, epoch: 1, count: 18_433), accepted: [], discarded: [.fragmentTooLong(18_433)]),
            ScreenCase(
                name: "truncated header after a good record", filter: handshaking,
                datagram: record(22, epoch: 0, count: 12) + [0x16, 0xFE], accepted: [0..<25],
                discarded: [.truncatedHeader(available: 2)]),
            ScreenCase(
                name: "length past the end of the datagram", filter: handshaking,
                datagram: dtlsRecord(22, epoch: 0, [UInt8](repeating: 1, count: 20), declaredLength: 200),
                accepted: [], discarded: [.truncatedFragment(declared: 200, available: 20)]),
        ]
    }

    @Test("the record screen keeps what the engine can read and says why it drops the rest", arguments: ScreenCase.all)
    func recordScreen(example: ScreenCase) {
        let screening = example.filter.screen(example.datagram)
        #expect(screening.accepted == example.accepted)
        #expect(screening.discarded == example.discarded)
    }

    @Test("the smallest genuine protected record of each offered suite")
    func protectionOfOfferedSuites() throws {
        #expect(DTLSRecordProtection.aead(explicitNonceLength: 8, tagLength: 16).minimumFragmentLength == 24)
        #expect(DTLSRecordProtection.aead(explicitNonceLength: 0, tagLength: 16).minimumFragmentLength == 16)
        #expect(DTLSRecordProtection.blockCipher(blockLength: 16, macLength: 20).minimumFragmentLength == 48)
        #expect(DTLSRecordProtection.blockCipher(blockLength: 16, macLength: 32).minimumFragmentLength == 64)
        #expect(DTLSRecordProtection.blockCipher(blockLength: 16, macLength: 48).minimumFragmentLength == 80)

        let ssl = try #require(SSL_new(DTLSLink.serverCertificate.context))
        defer { SSL_free(ssl) }
        let suites: [(id: [UInt8], protection: DTLSRecordProtection)] = [
            ([0xC0, 0x2B], .aead(explicitNonceLength: 8, tagLength: 16)),  // ECDHE-ECDSA-AES128-GCM-SHA256
            ([0xC0, 0x2C], .aead(explicitNonceLength: 8, tagLength: 16)),  // ECDHE-ECDSA-AES256-GCM-SHA384
            ([0xCC, 0xA9], .aead(explicitNonceLength: 0, tagLength: 16)),  // ECDHE-ECDSA-CHACHA20-POLY1305
            ([0xC0, 0x09], .blockCipher(blockLength: 16, macLength: 20)),  // ECDHE-ECDSA-AES128-SHA
            ([0xC0, 0x28], .blockCipher(blockLength: 16, macLength: 48)),  // ECDHE-RSA-AES256-SHA384
        ]
        for suite in suites {
            let cipher = try #require(SSL_CIPHER_find(ssl, suite.id))
            #expect(DTLSEngine.protection(of: cipher) == suite.protection)
        }
    }

    @Test("a clean handshake drops no genuine record, however fragmented", arguments: [1200, 600, 400])
    func genuineRecordsPass(mtu: Int) throws {
        var link = try DTLSLink(mtu: mtu)
        link.run()
        #expect(link.client.state == .connected)
        #expect(link.server.state == .connected)
        var queue = [UInt8](repeating: 7, count: mtu - 100).withUnsafeBytes { link.client.send(applicationData: $0) }
            .map { (true, $0) }
        link.deliver(&queue)
        #expect(link.applicationDataAtServer.count == 1)
        #expect(link.client.discardedRecordCount == 0)
        #expect(link.server.discardedRecordCount == 0)
    }

    @Test("a datagram of junk only is counted and never reaches OpenSSL")
    func junkOnlyDatagram() throws {
        var link = try DTLSLink()
        link.run()
        let junk = dtlsRecord(21, epoch: 1, [2, 40]) + dtlsRecord(25, epoch: 0, [1, 2, 3, 4]) + [0x16, 0xFE]
        let output = link.server.receive(junk, now: link.now)
        #expect(output.datagrams.isEmpty)
        #expect(output.stateChange == nil)
        #expect(link.server.state == .connected)
        #expect(link.server.discardedRecordCount == 3)
    }
}
