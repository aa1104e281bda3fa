import Crypto
import Media
import MediaLoad
import Testing
import Wire

/// The client's side of a TURN allocation, driven by a TURN server's answers written here (RFC 8656).
@Suite("TURN allocation (client)")
struct TURNAllocationTests {
    static let server = TURNServer(address: PeerAddress(host: "127.0.0.1", port: 3478)!, username: "1700000000:conn", password: "secret")
    static let key = MD5.hash("1700000000:conn:switchboard.test:secret")
    static func hmac(_ key: [UInt8], _ data: [UInt8]) -> [UInt8] { HMAC.sha1(key: key, data: data) }

    static func parse(_ bytes: [UInt8]) throws -> STUNMessage { try STUNMessage.parse(bytes) }

    /// The server's answer to `request`, integrity-protected with `key` when given.
    static func answer(_ request: STUNMessage, _ type: STUNMessageType, _ attributes: [STUNAttribute], key: [UInt8]?) throws -> [UInt8] {
        try STUNMessage(type: type, transactionID: request.transactionID, attributes: attributes).serialize(integrityKey: key, hmacSHA1: hmac, fingerprint: true)
    }

    static func feed(_ allocation: inout TURNAllocation, _ bytes: [UInt8], now: UInt64 = 1) throws -> TURNAllocation.Outcome {
        let message = try parse(bytes)
        return bytes.withUnsafeBytes { allocation.receive(message, bytes: $0, now: now) }
    }

    @Test("401 then an authenticated Allocate; the relayed address; permissions asked before it are sent once it is made; Data and Send indications; a forged answer is dropped; a stale nonce (its answer without integrity) is renewed; a release deletes it")
    func allocation() throws {
        var allocation = TURNAllocation(server: Self.server)
        let peer = PeerAddress(host: "127.0.0.1", port: 50_000)!
        #expect(allocation.permit(peer, now: 0) == nil, "no allocation yet: kept")
        let first = try Self.parse(allocation.start(now: 0))
        #expect(first.type == .allocateRequest && first.rawValue(.requestedTransport) == [17, 0, 0, 0] && first.attributes.allSatisfy { $0.type != .messageIntegrity })

        let challenge = try Self.answer(first, STUNMessageType(method: .allocate, messageClass: .errorResponse),
                                        [.errorCode(.unauthorized), .realm("switchboard.test"), .nonce("n1")], key: nil)
        let retry = try #require(try Self.feed(&allocation, challenge).send.first)
        let second = try Self.parse(retry)
        #expect(second.type == .allocateRequest && second.realm == "switchboard.test" && second.nonce == "n1")
        #expect(second.verifyIntegrity(in: retry, key: Self.key, hmacSHA1: Self.hmac), "MESSAGE-INTEGRITY with MD5(username:realm:password)")

        let relayed = STUNAddress.ipv4(0x7F00_0001, port: 61_000)
        let forged = try Self.answer(second, STUNMessageType(method: .allocate, messageClass: .successResponse),
                                     [.xorAddress(.xorRelayedAddress, relayed, transactionID: second.transactionID)], key: Array("wrong".utf8))
        _ = try Self.feed(&allocation, forged)
        #expect(allocation.state == .allocating, "an answer that does not authenticate is dropped")

        let granted = try Self.answer(second, STUNMessageType(method: .allocate, messageClass: .successResponse),
                                      [.xorAddress(.xorRelayedAddress, relayed, transactionID: second.transactionID), .lifetime(600)], key: Self.key)
        let permission = try Self.parse(try #require(try Self.feed(&allocation, granted).send.first))
        #expect(allocation.state == .allocated(relayed: PeerAddress(relayed)))
        #expect(permission.type == .createPermissionRequest && permission.xorAddress(.xorPeerAddress) == peer.stunAddress)
        #expect(allocation.permit(peer, now: 2) == nil, "asked already")

        // A stale nonce: asked again with the new one.
        let stale = try Self.answer(permission, STUNMessageType(method: .createPermission, messageClass: .errorResponse),
                                    [.errorCode(.staleNonce), .realm("switchboard.test"), .nonce("n2")], key: nil)
        let again = try Self.parse(try #require(try Self.feed(&allocation, stale).send.first))
        #expect(again.type == .createPermissionRequest && again.nonce == "n2" && again.xorAddress(.xorPeerAddress) == peer.stunAddress)

        // Send and Data indications carry a peer's datagrams.
        let payload: [UInt8] = [0x80, 111, 1, 2, 3]
        let send = try Self.parse(payload.withUnsafeBytes { allocation.wrap($0, to: peer) })
        #expect(send.type == .sendIndication && send.xorAddress(.xorPeerAddress) == peer.stunAddress && send.rawValue(.data) == payload)
        let id = STUNTransactionID(word0: 1, word1: 2, word2: 3)
        let data = try STUNMessage(type: .dataIndication, transactionID: id, attributes: [
            .xorAddress(.xorPeerAddress, peer.stunAddress, transactionID: id), .other(type: .data, value: payload),
        ]).serialize()
        let outcome = try Self.feed(&allocation, data)
        #expect(outcome.data?.peer == peer && outcome.data?.payload == payload)

        // Closing: one authenticated Refresh with LIFETIME 0 deletes the allocation, and nothing follows it.
        let releasing = allocation.release(now: 3)
        let release = try #require(releasing)
        let released = try Self.parse(release)
        #expect(released.type == .refreshRequest && released.lifetime == 0)
        #expect(released.verifyIntegrity(in: release, key: Self.key, hmacSHA1: Self.hmac))
        let twice = allocation.release(now: 4)
        #expect(twice == nil)
        let after = allocation.tick(now: 10_000_000_000_000)
        #expect(after.isEmpty, "no retransmission, refresh or permission after it")
    }

    @Test("a TURN server that never answers fails the allocation after its retransmissions; one that refuses the credential fails it at once")
    func failures() throws {
        var silent = TURNAllocation(server: Self.server)
        _ = silent.start(now: 0)
        var now: UInt64 = 0
        var sent = 0
        while silent.state == .allocating && now < 60_000_000_000 {
            now += 100_000_000
            sent += silent.tick(now: now).count
        }
        #expect(sent == 7 && silent.state == .failed("the TURN server did not answer"))

        var refused = TURNAllocation(server: Self.server)
        let first = try Self.parse(refused.start(now: 0))
        let challenge = try Self.answer(first, STUNMessageType(method: .allocate, messageClass: .errorResponse),
                                        [.errorCode(.unauthorized), .realm("switchboard.test"), .nonce("n1")], key: nil)
        let second = try Self.parse(try #require(try Self.feed(&refused, challenge).send.first))
        let denied = try Self.answer(second, STUNMessageType(method: .allocate, messageClass: .errorResponse),
                                     [.errorCode(.unauthorized), .realm("switchboard.test"), .nonce("n1")], key: nil)
        _ = try Self.feed(&refused, denied)
        if case .failed(let why) = refused.state { #expect(why.contains("401")) } else { Issue.record("\(refused.state)") }
    }
}
