import Testing
import Glibc
@testable import Crypto

@Suite("DTLS engine")
struct DTLSEngineTests {
    @Test("client and server connect and derive crosswise SRTP keys")
    func handshakeDerivesMatchingKeys() throws {
        var link = try DTLSLink()
        link.run()
        #expect(link.client.state == .connected)
        #expect(link.server.state == .connected)
        let clientKeys = try #require(link.client.srtpKeys)
        let serverKeys = try #require(link.server.srtpKeys)
        #expect(clientKeys.localKey == serverKeys.remoteKey)
        #expect(clientKeys.localSalt == serverKeys.remoteSalt)
        #expect(clientKeys.remoteKey == serverKeys.localKey)
        #expect(clientKeys.remoteSalt == serverKeys.localSalt)
        #expect(clientKeys.localKey != clientKeys.remoteKey)
        #expect(link.client.srtpProfile == .aeadAES128GCM)
        #expect(link.server.srtpProfile == .aeadAES128GCM)
        #expect(link.client.remoteCertificate == DTLSLink.serverCertificate.der)
        #expect(link.server.remoteCertificate == DTLSLink.clientCertificate.der)
    }

    @Test("the negotiated SRTP profile is the one both sides allow", arguments: SRTPProfile.allCases)
    func negotiatesConfiguredProfile(profile: SRTPProfile) throws {
        var link = try DTLSLink(clientProfiles: SRTPProfile.allCases, serverProfiles: [profile])
        link.run()
        #expect(link.client.srtpProfile == profile)
        #expect(link.server.srtpProfile == profile)
        let keys = try #require(link.client.srtpKeys)
        #expect(keys.localKey.count == profile.keyLength)
        #expect(keys.localSalt.count == profile.saltLength)
        #expect(keys.remoteKey == link.server.srtpKeys?.localKey)
        #expect(keys.remoteSalt == link.server.srtpKeys?.localSalt)
    }

    @Test("the server's preference order decides between shared profiles")
    func serverPreferenceWins() throws {
        var link = try DTLSLink(
            clientProfiles: [.aeadAES128GCM, .aes128CMSHA1_80], serverProfiles: [.aes128CMSHA1_80, .aeadAES128GCM])
        link.run()
        #expect(link.server.srtpProfile == .aes128CMSHA1_80)
        #expect(link.client.srtpProfile == .aes128CMSHA1_80)
    }

    @Test("no shared SRTP profile fails the handshake")
    func noSharedProfileFails() throws {
        var link = try DTLSLink(clientProfiles: [.aes128CMSHA1_80], serverProfiles: [.aeadAES256GCM])
        link.run()
        #expect(link.client.state != .connected)
        #expect(link.client.srtpKeys == nil)
    }

    @Test("every datagram fits the MTU and starts on a record boundary", arguments: [1200, 600, 400])
    func datagramsRespectMTU(mtu: Int) throws {
        var link = try DTLSLink(mtu: mtu)
        link.run()
        #expect(link.client.state == .connected)
        #expect(link.server.state == .connected)
        #expect(!link.sent.isEmpty)
        for (_, datagram) in link.sent {
            #expect(datagram.count <= mtu)
            #expect(dtlsRecords(in: datagram) != nil, "datagram of \(datagram.count) bytes is not whole records")
        }
        // Packing: a flight's records share datagrams rather than one record per datagram.
        let records = link.sent.reduce(0) { $0 + (dtlsRecords(in: $1.datagram)?.count ?? 0) }
        #expect(records > link.sent.count)
    }

    @Test("a wrong remote fingerprint fails the server and alerts the client")
    func serverRejectsWrongFingerprint() throws {
        let wrong = DTLSFingerprint.format([UInt8](repeating: 0xAB, count: 32))
        var link = try DTLSLink(serverExpects: wrong)
        link.run()
        #expect(link.server.state == .failed(.fingerprintMismatch))
        #expect(link.server.srtpKeys == nil)
        #expect(link.client.state != .connected)
        #expect(link.client.state == .failed(.alertReceived(description: 42)))  // bad_certificate
    }

    @Test("the client rejects a server whose certificate does not match its fingerprint")
    func clientRejectsWrongFingerprint() throws {
        var link = try DTLSLink(clientExpects: DTLSLink.clientCertificate.fingerprintSHA256)
        link.run()
        #expect(link.client.state == .failed(.fingerprintMismatch))
        #expect(link.server.state != .connected)
        #expect(link.client.srtpKeys == nil)
    }

    @Test("fingerprints compare case-insensitively")
    func fingerprintCaseInsensitive() throws {
        var link = try DTLSLink(
            clientExpects: DTLSLink.serverCertificate.fingerprintSHA256.lowercased(),
            serverExpects: DTLSLink.clientCertificate.fingerprintSHA256.lowercased())
        link.run()
        #expect(link.client.state == .connected)
        #expect(link.server.state == .connected)
    }

    @Test("a malformed or unknown expected fingerprint is rejected up front")
    func badExpectedFingerprint() {
        #expect(throws: DTLSSetupError.malformedFingerprint("AB:C")) {
            try DTLSEngine(role: .client, certificate: DTLSLink.clientCertificate, expectedRemoteFingerprint: ("sha-256", "AB:C"))
        }
        #expect(throws: DTLSSetupError.unsupportedFingerprintAlgorithm("md5")) {
            try DTLSEngine(role: .client, certificate: DTLSLink.clientCertificate, expectedRemoteFingerprint: ("md5", "AB"))
        }
    }

    /// Datagrams no honest peer sends: truncated headers, bad versions, impossible lengths, noise.
    static let garbage: [[UInt8]] = [
        [0x16], [0x16, 0xFE, 0xFD], [0x17, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 1, 2, 3],
        Array(repeating: 0x16, count: 1500), (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 37) },
        [0x15, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 9, 0, 2, 2, 40],  // "fatal alert" in an epoch we never set up
        [0x17, 0xFE, 0xFD, 0, 1, 0, 0, 0, 0, 0, 9, 0, 32] + [UInt8](repeating: 0x42, count: 32),  // unauthenticated data
    ]

    @Test("garbage datagrams are dropped without derailing the handshake", arguments: 0..<garbage.count)
    func garbageIsDropped(index: Int) throws {
        let junk = Self.garbage[index]
        let link = try DTLSLink()
        _ = link.server.receive(junk, now: link.now)  // before anything started
        #expect(link.server.state == .connecting)
        _ = link.server.start(now: link.now)
        var queue = link.client.start(now: link.now).map { (true, $0) }
        var rounds = 0
        while !queue.isEmpty && rounds < 100 {
            rounds += 1
            let (fromClient, datagram) = queue.removeFirst()
            let receiver = fromClient ? link.server : link.client
            queue += receiver.receive(junk, now: link.now).datagrams.map { (!fromClient, $0) }
            queue += receiver.receive(datagram, now: link.now).datagrams.map { (!fromClient, $0) }
        }
        #expect(link.client.state == .connected)
        #expect(link.server.state == .connected)
        let output = link.client.receive(junk, now: link.now)
        #expect(output.applicationData.isEmpty)
        #expect(link.client.state == .connected)
    }

    @Test("a forged plaintext handshake record fails the handshake cleanly, never crashes")
    func forgedHandshakeRecord() throws {
        // Epoch 0 is unauthenticated, so OpenSSL may abort on a malformed handshake message.
        let forged: [UInt8] = [0x16, 0xFE, 0xFD, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 1, 0, 0, 0]
        let link = try DTLSLink()
        _ = link.server.start(now: link.now)
        let hello = link.client.start(now: link.now)
        let output = link.server.receive(forged, now: link.now)
        if case .failed = link.server.state {
            #expect(output.stateChange == link.server.state)
            #expect(link.server.nextTimeout() == nil)
            for datagram in hello { #expect(link.server.receive(datagram, now: link.now).datagrams.isEmpty) }
        } else {
            #expect(link.server.state == .connecting)
        }
    }

    // MARK: Spoofed records (RFC 6347 §4.1.2.7)

    /// A record anyone who can spoof the peer's address can send: no key is needed.
    struct SpoofedRecord: Sendable, CustomTestStringConvertible {
        let name: String
        let bytes: [UInt8]
        var testDescription: String { name }

        init(_ name: String, _ bytes: [UInt8]) {
            self.name = name
            self.bytes = bytes
        }

        static func filler(_ count: Int) -> [UInt8] { [UInt8](repeating: 0x42, count: count) }

        static let all: [SpoofedRecord] = [
            // Shorter than AES-GCM's 8-byte nonce and 16-byte tag: OpenSSL 3.0 raised internal_error.
            SpoofedRecord("fatal alert in epoch 1, 2 bytes", dtlsRecord(21, epoch: 1, [2, 40])),
            SpoofedRecord("handshake in epoch 1, 12 bytes", dtlsRecord(22, epoch: 1, [20, 0, 0, 12, 0, 1] + [0, 0, 0, 0, 0, 12])),
            SpoofedRecord("application data in epoch 1, 23 bytes", dtlsRecord(23, epoch: 1, filler(23))),
            SpoofedRecord("empty record in epoch 1", dtlsRecord(23, epoch: 1, [])),
            // Long enough, but the tag does not verify: a decryption failure, silently discarded.
            SpoofedRecord("application data in epoch 1 failing authentication", dtlsRecord(23, epoch: 1, filler(64))),
            SpoofedRecord("alert in epoch 1 failing authentication", dtlsRecord(21, epoch: 1, filler(26))),
            // Plaintext junk OpenSSL 3.0 treated as fatal while handshaking.
            SpoofedRecord("unknown content type 25", dtlsRecord(25, epoch: 0, [1, 2, 3, 4])),
            SpoofedRecord("heartbeat, never negotiated", dtlsRecord(24, epoch: 0, [1, 0, 1, 0])),
            SpoofedRecord("plaintext application data", dtlsRecord(23, epoch: 0, [1, 2, 3, 4])),
            SpoofedRecord("plaintext alert, 3 bytes", dtlsRecord(21, epoch: 0, [2, 40, 0])),
            // Harmless to OpenSSL already; dropped by the engine all the same.
            SpoofedRecord("alert in epoch 2", dtlsRecord(21, epoch: 2, filler(26))),
            SpoofedRecord("ChangeCipherSpec in epoch 1", dtlsRecord(20, epoch: 1, filler(26))),
            SpoofedRecord("length past the datagram", dtlsRecord(22, epoch: 0, filler(20), declaredLength: 200)),
        ]
    }

    /// Where, relative to the handshake, a spoofed record reaches which side.
    struct SpoofDelivery: Sendable, CustomTestStringConvertible {
        enum Moment: Sendable, CaseIterable {
            /// Before the first genuine datagram: the ClientHello at the server, the server's
            /// hello flight at the client.
            case beforeHello
            /// Just before the datagram carrying the peer's ChangeCipherSpec and Finished, so
            /// OpenSSL buffers next-epoch junk and reads it right after the key change.
            case beforeChangeCipherSpec
            /// That datagram cut in two: the spoof lands between ChangeCipherSpec and Finished.
            case afterChangeCipherSpec
            /// Reordered: the peer's epoch-1 Finished first, then the spoof, then the
            /// ChangeCipherSpec and the rest of the flight.
            case finishedFirst
            /// Once both sides are connected.
            case afterHandshake
        }
        let toClient: Bool
        let moment: Moment
        var testDescription: String { "\(moment) to the \(toClient ? "client" : "server")" }

        static let all: [SpoofDelivery] = Moment.allCases.flatMap { moment in
            [SpoofDelivery(toClient: false, moment: moment), SpoofDelivery(toClient: true, moment: moment)]
        }

        /// The pieces to deliver instead of `datagram`, spoof included (marked), or nil if
        /// this datagram is not where the spoof goes.
        func interleave(_ spoof: [UInt8], into datagram: [UInt8]) -> [(bytes: [UInt8], isSpoof: Bool)]? {
            guard let records = dtlsRecords(in: datagram), let bytes = dtlsRecordBytes(in: datagram) else { return nil }
            let changeCipherSpec = records.firstIndex { $0.type == 20 }
            switch moment {
            case .beforeHello:
                return [(spoof, true), (datagram, false)]
            case .beforeChangeCipherSpec:
                guard changeCipherSpec != nil else { return nil }
                return [(spoof, true), (datagram, false)]
            case .afterChangeCipherSpec:
                guard let ccs = changeCipherSpec else { return nil }
                let head = bytes[...ccs].flatMap { $0 }
                let tail = bytes[(ccs + 1)...].flatMap { $0 }
                return [(head, false), (spoof, true), (tail, false)].filter { !$0.0.isEmpty }
            case .finishedFirst:
                guard changeCipherSpec != nil else { return nil }
                let protected = records.indices.filter { records[$0].epoch > 0 }.flatMap { bytes[$0] }
                let plaintext = records.indices.filter { records[$0].epoch == 0 }.flatMap { bytes[$0] }
                return [(protected, false), (spoof, true), (plaintext, false)].filter { !$0.0.isEmpty }
            case .afterHandshake:
                return nil
            }
        }
    }

    @Test(
        "a spoofed record is dropped wherever it lands in the handshake",
        arguments: SpoofedRecord.all, SpoofDelivery.all)
    func spoofedRecordIsDropped(spoof: SpoofedRecord, delivery: SpoofDelivery) throws {
        var link = try DTLSLink()
        let (client, server, now) = (link.client, link.server, link.now)
        let target = delivery.toClient ? client : server
        var spoofed = false
        var answersToSpoof: [[UInt8]] = []

        _ = server.start(now: now)
        var queue = client.start(now: now).map { (toServer: true, bytes: $0, isSpoof: false) }
        var rounds = 0
        while !queue.isEmpty && rounds < 200 {
            rounds += 1
            let item = queue.removeFirst()
            let receiver = item.toServer ? server : client
            if !spoofed, !item.isSpoof, receiver === target,
                let pieces = delivery.interleave(spoof.bytes, into: item.bytes)
            {
                spoofed = true
                if delivery.moment == .afterChangeCipherSpec || delivery.moment == .finishedFirst {
                    #expect(pieces.count == 3, "the ChangeCipherSpec and Finished travel together")
                }
                queue.insert(contentsOf: pieces.map { (item.toServer, $0.bytes, $0.isSpoof) }, at: 0)
                continue
            }
            let output = receiver.receive(item.bytes, now: now)
            if item.isSpoof { answersToSpoof += output.datagrams }
            queue += output.datagrams.map { (!item.toServer, $0, false) }
        }
        if delivery.moment == .afterHandshake {
            spoofed = true
            answersToSpoof += target.receive(spoof.bytes, now: now).datagrams
        }

        #expect(spoofed)
        #expect(client.state == .connected)
        #expect(server.state == .connected)
        let clientKeys = try #require(client.srtpKeys)
        #expect(clientKeys.localKey == server.srtpKeys?.remoteKey)
        #expect(clientKeys.remoteKey == server.srtpKeys?.localKey)
        // Never answered with an alert: a spoofer learns nothing and breaks nothing.
        #expect(answersToSpoof.allSatisfy { dtlsRecords(in: $0)?.contains { $0.type == 21 } == false })
        // The association still carries data both ways.
        var flight = Array("after the spoof".utf8).withUnsafeBytes { client.send(applicationData: $0) }
            .map { (true, $0) }
        link.deliver(&flight)
        flight = Array("still here".utf8).withUnsafeBytes { server.send(applicationData: $0) }.map { (false, $0) }
        link.deliver(&flight)
        #expect(link.applicationDataAtServer == [Array("after the spoof".utf8)])
        #expect(link.applicationDataAtClient == [Array("still here".utf8)])
    }

    @Test("a lost server flight is resent after its timer expires and the handshake completes")
    func retransmitsLostFlight() throws {
        let policy = DTLSEngine.RetransmissionPolicy(initialMilliseconds: 40, maximumMilliseconds: 1_000)
        var link = try DTLSLink(retransmission: policy)
        _ = link.server.start(now: link.now)
        let hello = link.client.start(now: link.now)
        #expect(link.client.nextTimeout() != nil)
        var lost: [[UInt8]] = []
        for datagram in hello { lost += link.server.receive(datagram, now: link.now).datagrams }
        #expect(!lost.isEmpty)  // the whole first server flight goes missing
        let deadline = try #require(link.server.nextTimeout())
        #expect(deadline > link.now)
        #expect(deadline <= link.now + 40_000_000)

        // Nothing happens before the deadline.
        #expect(link.server.handleTimeout(now: deadline - 1).datagrams.isEmpty)

        // OpenSSL's timer runs on its own clock: let it pass, then advance ours to the deadline.
        usleep(60_000)
        link.now = deadline
        let resent = link.server.handleTimeout(now: link.now)
        #expect(resent.datagrams.count == lost.count)
        #expect(resent.datagrams.map(\.count) == lost.map(\.count))
        #expect(resent.datagrams != lost)  // fresh record sequence numbers
        let next = try #require(link.server.nextTimeout())
        #expect(next > link.now)

        var queue = resent.datagrams.map { (false, $0) }
        link.deliver(&queue)
        // The client's own timer may have fired meanwhile; drain any leftover exchange.
        for _ in 0..<3 where link.client.state != .connected || link.server.state != .connected {
            usleep(60_000)
            link.now += 100_000_000
            var more = link.client.handleTimeout(now: link.now).datagrams.map { (true, $0) }
            more += link.server.handleTimeout(now: link.now).datagrams.map { (false, $0) }
            link.deliver(&more)
        }
        #expect(link.client.state == .connected)
        #expect(link.server.state == .connected)
        #expect(link.client.srtpKeys?.localKey == link.server.srtpKeys?.remoteKey)
    }

    @Test("a lost client hello is resent")
    func retransmitsClientHello() throws {
        let policy = DTLSEngine.RetransmissionPolicy(initialMilliseconds: 30, maximumMilliseconds: 1_000)
        var link = try DTLSLink(retransmission: policy)
        _ = link.server.start(now: link.now)
        _ = link.client.start(now: link.now)  // lost
        usleep(50_000)
        link.now = try #require(link.client.nextTimeout())
        var queue = link.client.handleTimeout(now: link.now).datagrams.map { (true, $0) }
        #expect(!queue.isEmpty)
        link.deliver(&queue)
        #expect(link.client.state == .connected)
        #expect(link.server.state == .connected)
    }

    @Test("a lost final server flight is recovered by the client's retransmission")
    func recoversLostFinalFlight() throws {
        let policy = DTLSEngine.RetransmissionPolicy(initialMilliseconds: 30, maximumMilliseconds: 1_000)
        var link = try DTLSLink(retransmission: policy)
        let server = link.server
        // Once the server has finished, everything it says (its ChangeCipherSpec + Finished) is lost.
        link.run(drop: { fromClient, _ in !fromClient && server.state == .connected })
        #expect(link.server.state == .connected)
        #expect(link.client.state == .connecting)
        #expect(link.client.nextTimeout() != nil)
        usleep(50_000)
        link.now = try #require(link.client.nextTimeout())
        var queue = link.client.handleTimeout(now: link.now).datagrams.map { (true, $0) }
        #expect(!queue.isEmpty)
        link.deliver(&queue)
        #expect(link.client.state == .connected)
        #expect(link.client.srtpKeys?.localKey == link.server.srtpKeys?.remoteKey)
    }

    @Test("application data flows both ways once connected")
    func applicationData() throws {
        var link = try DTLSLink()
        link.run()
        let message: [UInt8] = Array("sctp packet".utf8)
        var queue = message.withUnsafeBytes { link.client.send(applicationData: $0) }.map { (true, $0) }
        link.deliver(&queue)
        #expect(link.applicationDataAtServer == [message])
        queue = ([9, 8, 7] as [UInt8]).withUnsafeBytes { link.server.send(applicationData: $0) }.map { (false, $0) }
        link.deliver(&queue)
        #expect(link.applicationDataAtClient == [[9, 8, 7]])
    }

    @Test("close sends close_notify and the peer closes too")
    func closeNotify() throws {
        var link = try DTLSLink()
        link.run()
        let goodbye = link.client.close()
        #expect(!goodbye.isEmpty)
        #expect(link.client.state == .closed)
        let output = link.server.receive(goodbye[0], now: link.now)
        #expect(output.stateChange == .closed)
        #expect(link.server.state == .closed)
        #expect(link.server.nextTimeout() == nil)
        // Closed engines ignore further input.
        #expect(link.server.receive(goodbye[0], now: link.now).datagrams.isEmpty)
        #expect(link.client.close().isEmpty)
    }

    @Test("state changes are reported once, in the output that caused them")
    func stateChangesReported() throws {
        let link = try DTLSLink()
        _ = link.server.start(now: link.now)
        var changes: [(Bool, DTLSState)] = []
        var queue = link.client.start(now: link.now).map { (true, $0) }
        while !queue.isEmpty {
            let (fromClient, datagram) = queue.removeFirst()
            let output = (fromClient ? link.server : link.client).receive(datagram, now: link.now)
            if let change = output.stateChange { changes.append((fromClient ? false : true, change)) }
            queue += output.datagrams.map { (!fromClient, $0) }
        }
        #expect(changes.filter { $0.1 == .connected }.count == 2)
    }
}
