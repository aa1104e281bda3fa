import Testing
import Wire
@testable import Media

@Suite("ICE-lite server")
struct ICEServerTests {
    let local = ICEParameters(usernameFragment: "srvU", password: "server-password-0123456789", iceLite: true)
    let peer = PeerAddress(ipv4: 0x7F00_0001, port: 50_000)

    func request(
        username: String? = "srvU:cliU", password: String = "server-password-0123456789", useCandidate: Bool = false,
        controlling: Bool = true, integrity: Bool = true
    ) -> [UInt8] {
        var attributes: [STUNAttribute] = []
        if let username { attributes.append(.username(username)) }
        attributes.append(.priority(1_853_824_767))
        attributes.append(controlling ? .iceControlling(tieBreaker: 42) : .iceControlled(tieBreaker: 42))
        if useCandidate { attributes.append(.useCandidate) }
        let message = STUNMessage(type: .bindingRequest, transactionID: STUNTransactionID(word0: 1, word1: 2, word2: 3), attributes: attributes)
        return try! message.serialize(integrityKey: integrity ? Array(password.utf8) : nil, hmacSHA1: hmacSHA1, fingerprint: true)
    }

    func handle(_ server: ICEServer, _ bytes: [UInt8], from: PeerAddress? = nil, now: UInt64 = ms(1)) -> (ICEServer.Outcome, STUNMessage?) {
        let message = try! STUNMessage.parse(bytes)
        let outcome = bytes.withUnsafeBytes { server.handleRequest(message, bytes: $0, from: from ?? peer, now: now) }
        return (outcome, outcome.response.flatMap { try? STUNMessage.parse($0) })
    }

    @Test("a valid check gets a signed success with the source as XOR-MAPPED-ADDRESS and selects the path")
    func validCheck() throws {
        let server = ICEServer(local: local)
        let (outcome, response) = handle(server, request())
        let reply = try #require(response)
        #expect(reply.type == .bindingSuccess)
        #expect(reply.xorMappedAddress == peer.stunAddress)
        #expect(reply.verifyIntegrity(in: outcome.response!, key: Array(local.password.utf8), hmacSHA1: hmacSHA1))
        #expect(reply.verifyFingerprint(in: outcome.response!))
        #expect(outcome.selected == peer)
        #expect(server.state == .connected)
    }

    @Test("a wrong password is answered 401 and selects nothing")
    func wrongPassword() {
        let server = ICEServer(local: local)
        let (outcome, response) = handle(server, request(password: "not-the-password-at-all"))
        #expect(response?.errorCode?.code == 401)
        #expect(outcome.selected == nil)
        #expect(!outcome.valid)
    }

    @Test("a request without MESSAGE-INTEGRITY or USERNAME is a 400")
    func malformed() {
        let server = ICEServer(local: local)
        #expect(handle(server, request(integrity: false)).1?.errorCode?.code == 400)
        #expect(handle(server, request(username: nil)).1?.errorCode?.code == 400)
    }

    @Test("a USERNAME for another ufrag or remote ufrag is a 401")
    func wrongUsername() {
        let server = ICEServer(local: local)
        server.remoteUsernameFragment = "cliU"
        #expect(handle(server, request(username: "other:cliU")).1?.errorCode?.code == 401)
        #expect(handle(server, request(username: "srvU:else")).1?.errorCode?.code == 401)
    }

    @Test("a peer that also claims to be controlled gets 487 Role Conflict")
    func roleConflict() {
        let server = ICEServer(local: local)
        #expect(handle(server, request(controlling: false)).1?.errorCode?.code == 487)
    }

    @Test("USE-CANDIDATE completes ICE and moves the path to the nominated address")
    func nomination() {
        let server = ICEServer(local: local)
        _ = handle(server, request())
        let mobile = PeerAddress(ipv4: 0x0A00_0002, port: 40_000)
        let (plain, _) = handle(server, request(), from: mobile, now: ms(2))
        #expect(plain.selected == nil, "an unnominated check does not steal a live path")
        let (nominated, _) = handle(server, request(useCandidate: true), from: mobile, now: ms(3))
        #expect(nominated.selected == mobile)
        #expect(server.state == .completed)
        #expect(server.isValidated(peer) && server.isValidated(mobile))
    }

    @Test("a check from a new address takes over once the selected path went quiet")
    func switchAfterSilence() {
        let server = ICEServer(local: local)
        _ = handle(server, request(), now: ms(1))
        let mobile = PeerAddress(ipv4: 0x0A00_0002, port: 40_000)
        let (outcome, _) = handle(server, request(), from: mobile, now: ms(1) + ICEServer.staleSelectionAfter + 1)
        #expect(outcome.selected == mobile)
    }

    @Test("consent expires 30 s after the last valid check")
    func consent() {
        let server = ICEServer(local: local)
        _ = handle(server, request(), now: ms(1))
        #expect(server.tick(now: ms(1) + ICEServer.consentTimeout) == nil)
        _ = handle(server, request(), now: ms(20_000))
        #expect(server.tick(now: ms(20_000) + ICEServer.consentTimeout - 1) == nil)
        #expect(server.tick(now: ms(20_000) + ICEServer.consentTimeout + 1) == .failed)
        #expect(server.state == .failed)
        #expect(handle(server, request(), now: ms(60_000)).1 == nil, "a failed transport stays silent")
    }

    @Test("remembered paths are bounded")
    func boundedTuples() {
        let server = ICEServer(local: local)
        for i in 0..<50 { _ = handle(server, request(), from: PeerAddress(ipv4: 0x0A00_0000 + UInt32(i), port: 1), now: ms(UInt64(i + 1))) }
        #expect(server.addresses.count <= ICEServer.maxTuples)
        #expect(server.addresses.contains(server.selected!))
    }
}
