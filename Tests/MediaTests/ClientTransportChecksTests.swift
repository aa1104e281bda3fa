import Crypto
import Dispatch
import Glibc
import Testing
@testable import Media
import MediaLoad
import Wire

/// A server that is a full ICE agent (Janus's libnice, even in its lite mode) sends triggered checks
/// and selects the pair only once the client answers them (RFC 8445 §7.3).
@Suite("Client transport towards a full ICE agent")
struct ClientTransportChecksTests {
    @Test("a check from the server gets an authenticated success naming the server's address; a forged one gets nothing")
    func answersChecks() async throws {
        let server = try UDPSocket(host: "127.0.0.1", port: 0)
        let serverAddress = try #require(PeerAddress(host: "127.0.0.1", port: server.localPort))
        let certificate = try DTLSCertificate()
        let client = try ClientTransport(certificate: certificate, bindHost: "127.0.0.1", srtpProfiles: [.aeadAES128GCM])
        let serverICE = ICEParameters.random(iceLite: false)
        try client.configure(
            remote: serverICE, server: serverAddress,
            fingerprint: DTLSFingerprintValue(algorithm: "sha-256", value: certificate.fingerprintSHA256), dtlsRole: .server)

        let transaction = STUNTransactionID(word0: 0x0102_0304, word1: 0x0506_0708, word2: 0x090A_0B0C)
        func check(password: String) throws -> [UInt8] {
            try STUNMessage(
                type: .bindingRequest, transactionID: transaction,
                attributes: [.username("\(client.local.usernameFragment):\(serverICE.usernameFragment)"), .priority(1_853_824_767),
                             .iceControlled(tieBreaker: 42)]
            ).serialize(integrityKey: Array(password.utf8), hmacSHA1: { HMAC.sha1(key: $0, data: $1) }, fingerprint: true)
        }

        var request = try check(password: client.local.password)
        let outcome = request.withUnsafeMutableBytes { client.receive($0.baseAddress!, length: $0.count, now: 1) }
        guard case .none = outcome else { Issue.record("a check is not for the owner: \(outcome)"); return }
        let reply = try #require(await receive(on: server, within: .seconds(2)))
        let message = try STUNMessage.parse(reply)
        #expect(message.type == .bindingSuccess)
        #expect(message.transactionID == transaction)
        #expect(message.xorMappedAddress == STUNAddress.ipv4(0x7F00_0001, port: server.localPort))
        #expect(message.verifyIntegrity(in: reply, key: Array(client.local.password.utf8), hmacSHA1: { HMAC.sha1(key: $0, data: $1) }))

        var forged = try check(password: "not the client's password")
        _ = forged.withUnsafeMutableBytes { client.receive($0.baseAddress!, length: $0.count, now: 2) }
        #expect(await receive(on: server, within: .milliseconds(300)) == nil)
    }

    @Test("peer to peer: the answerer, told none of the offerer's candidates, answers its checks, learns its address from them and connects, DTLS and SRTP both ways; host candidates of a loopback-bound socket are its address alone")
    func peerToPeer() throws {
        let certificate = try DTLSCertificate()
        let offerer = try ClientTransport(certificate: certificate, bindHost: "127.0.0.1", srtpProfiles: [.aeadAES128GCM])
        let answerer = try ClientTransport(certificate: try DTLSCertificate(), bindHost: "127.0.0.1", srtpProfiles: [.aeadAES128GCM])
        let candidates = answerer.hostCandidates()
        #expect(candidates.count == 1 && candidates[0].hasSuffix(" 127.0.0.1 \(answerer.socket.localPort) typ host"), "\(candidates)")
        let answererAddress = try #require(ClientSDP.candidateAddress("candidate:" + candidates[0]))
        // A candidate that cannot be reached from a loopback-bound socket is not checked.
        offerer.addCandidate(try #require(PeerAddress(host: "192.0.2.9", port: 9)))
        // The offerer (controlling) knows the answerer's candidate; the answerer (controlled) knows none of the offerer's.
        try offerer.configure(remote: answerer.local, candidates: [answererAddress],
                              fingerprint: DTLSFingerprintValue(algorithm: "sha-256", value: answerer.certificate.fingerprintSHA256),
                              dtlsRole: .server, controlling: true)
        try answerer.configure(remote: offerer.local, candidates: [],
                               fingerprint: DTLSFingerprintValue(algorithm: "sha-256", value: certificate.fingerprintSHA256),
                               dtlsRole: .client, controlling: false)
        let batch = DatagramBatch(capacity: 16, stride: 2048)
        var received: [Int] = []
        func pump(_ t: ClientTransport, now: UInt64) {
            t.tick(now: now)
            let n = batch.receive(from: t.socket)
            for i in 0..<max(0, n) {
                if case .rtp(let length) = t.receive(batch.slot(i), length: Int(batch.lengths[i]), now: now, from: batch.source(i)) {
                    received.append(length)
                }
            }
        }
        // On this thread throughout (a busy cooperative pool would leave an awaiting loop few turns).
        let deadline = ContinuousClock.now + .seconds(20)
        while !(offerer.connected && answerer.connected), ContinuousClock.now < deadline {
            let now = DispatchTime.now().uptimeNanoseconds
            pump(offerer, now: now)
            pump(answerer, now: now)
            usleep(2_000)
        }
        #expect(offerer.connected && answerer.connected, "\(offerer.progress); \(answerer.progress)")
        #expect(answerer.progress.contains("controlled to 127.0.0.1:\(offerer.socket.localPort)"), "\(answerer.progress)")
        // RTP each way.
        for (from, to) in [(offerer, answerer), (answerer, offerer)] {
            var packet = [UInt8](repeating: 0, count: 2048)
            packet[0] = 0x80
            packet[1] = 111
            packet[11] = 7
            received = []
            _ = packet.withUnsafeMutableBytes { from.sendRTP($0.baseAddress!, length: 12 + 100, capacity: $0.count) }
            let until = ContinuousClock.now + .seconds(10)
            while received.isEmpty, ContinuousClock.now < until {
                pump(to, now: DispatchTime.now().uptimeNanoseconds)
                usleep(2_000)
            }
            #expect(received == [112])
        }
    }

    @Test("towards an ICE-lite server: checks nominate nothing until a pair answers; then one nominating the selected pair goes at once, again every 100 ms until answered, then every 5 s; a forged answer selects nothing")
    func regularNomination() async throws {
        let server = try UDPSocket(host: "127.0.0.1", port: 0)
        let certificate = try DTLSCertificate()
        let client = try ClientTransport(certificate: certificate, bindHost: "127.0.0.1", srtpProfiles: [.aeadAES128GCM])
        let serverICE = ICEParameters.random(iceLite: true)
        try client.configure(
            remote: serverICE, server: try #require(PeerAddress(host: "127.0.0.1", port: server.localPort)),
            fingerprint: DTLSFingerprintValue(algorithm: "sha-256", value: certificate.fingerprintSHA256), dtlsRole: .server)
        let clientAddress = try #require(PeerAddress(host: "127.0.0.1", port: client.socket.localPort))
        let ms: UInt64 = 1_000_000
        func nextCheck() async throws -> STUNMessage? {
            guard let bytes = await receive(on: server, within: .milliseconds(300)) else { return nil }
            let message = try STUNMessage.parse(bytes)
            #expect(message.type == .bindingRequest)
            return message
        }
        func answer(_ check: STUNMessage, key: String, now: UInt64) throws {
            var reply = try STUNMessage.bindingSuccess(to: check, mappedAddress: clientAddress.stunAddress).serialize(
                integrityKey: Array(key.utf8), hmacSHA1: { HMAC.sha1(key: $0, data: $1) }, fingerprint: true)
            _ = reply.withUnsafeMutableBytes { client.receive($0.baseAddress!, length: $0.count, now: now) }
        }

        client.tick(now: 1_000 * ms)
        let first = try #require(try await nextCheck())
        #expect(!first.useCandidate, "a check before any pair answered nominates nothing")
        try answer(first, key: "not the server's password", now: 1_001 * ms)
        #expect(try await nextCheck() == nil && !client.iceConnected, "a forged answer selects nothing")

        client.tick(now: 1_100 * ms)
        let second = try #require(try await nextCheck())
        #expect(!second.useCandidate)
        try answer(second, key: serverICE.password, now: 1_101 * ms)
        #expect(client.iceConnected)
        let nominating = try #require(try await nextCheck(), "the nominating check goes as the pair is selected")
        #expect(nominating.useCandidate)
        client.tick(now: 1_201 * ms)
        let again = try #require(try await nextCheck(), "unanswered, it goes again 100 ms later")
        #expect(again.useCandidate)
        try answer(again, key: serverICE.password, now: 1_202 * ms)
        client.tick(now: 1_400 * ms)
        #expect(try await nextCheck() == nil, "answered: the next check is consent's, 5 s later")
        client.tick(now: 6_300 * ms)
        #expect(try await nextCheck()?.useCandidate == true)
    }

    /// The next datagram on `socket`, polled without blocking the test's thread.
    func receive(on socket: UDPSocket, within limit: Duration) async -> [UInt8]? {
        let deadline = ContinuousClock.now + limit
        var buffer = [UInt8](repeating: 0, count: 2048)
        while ContinuousClock.now < deadline {
            let n = buffer.withUnsafeMutableBytes { recv(socket.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { return Array(buffer[0..<n]) }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return nil
    }
}
