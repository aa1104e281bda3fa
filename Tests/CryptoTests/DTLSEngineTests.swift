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
