import Crypto
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
