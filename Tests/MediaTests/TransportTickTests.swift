import Crypto
import Runtime
import Testing
@testable import Media

/// The worker visits a transport on its 20 ms tick only when one of the transport's timers is due:
/// a listener's about once a second (its reports), a publisher's or a connecting one's every tick.
@Suite("Transport timers on the worker's tick")
struct TransportTickTests {
    let core: WorkerCore
    let router = RouterID(rawValue: "r")
    let keys = SRTPKeys(
        localKey: [UInt8](repeating: 1, count: 16), localSalt: [UInt8](repeating: 2, count: 12),
        remoteKey: [UInt8](repeating: 1, count: 16), remoteSalt: [UInt8](repeating: 2, count: 12))

    init() throws {
        var configuration = MediaConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.port = 0
        core = WorkerCore(
            index: 0, loop: EventLoop(index: 98), socket: try UDPSocket(host: "127.0.0.1", port: 0),
            certificate: try DTLSCertificate(), configuration: configuration) { _ in }
        core.queue.discard = true
        core.createRouter(router)
    }

    func transport(_ name: String, port: UInt16, connected: Bool = true) throws -> WebRTCTransport {
        let id = TransportID(rawValue: name)
        _ = try core.createTransport(router: router, transportID: id)
        try core.connect(id, parameters: DTLSParameters(role: .server, fingerprint: DTLSFingerprintValue(
            algorithm: "sha-256", value: core.certificate.fingerprintSHA256)), remoteUsernameFragment: nil)
        let transport = try #require(core.transports[id])
        if connected {
            try transport.installForBenchmark(profile: .aeadAES128GCM, keys: keys, address: PeerAddress(ipv4: 0x7F00_0001, port: port))
        }
        return transport
    }

    @Test("a listener's transport is next due at its next report; a publisher's and a connecting one's at once")
    func dueTimes() throws {
        let publisher = try transport("pub", port: 40_000)
        try core.produce(publisher.id, producerID: ProducerID(rawValue: "p"), parameters: ProducerParameters(
            kind: .audio, mid: "0", codec: .opus, ssrc: 0x1234_5678))
        let listener = try transport("sub", port: 40_001)
        _ = try core.consume(listener.id, consumerID: ConsumerID(rawValue: "c"), producer: ProducerID(rawValue: "p"))
        let connecting = try transport("new", port: 40_002, connected: false)

        let t0 = ms(100_000)
        #expect(publisher.tick(now: t0) == t0)
        #expect(connecting.tick(now: t0) == t0)
        #expect(listener.tick(now: t0) == t0 + WebRTCTransport.reportInterval)
        // Nothing due in between changes that; the report after is a second later again.
        #expect(listener.tick(now: t0 + ms(500)) == t0 + WebRTCTransport.reportInterval)
        #expect(listener.tick(now: t0 + WebRTCTransport.reportInterval) == t0 + 2 * WebRTCTransport.reportInterval)
    }

    @Test("a new producer brings its transport's tick forward; closing transports keeps the tick list whole")
    func tickList() throws {
        let transports = try (0..<4).map { try transport("t\($0)", port: UInt16(41_000 + $0)) }
        let t0 = ms(200_000)
        core.tickTransports(now: t0)
        #expect(core.tickDue.allSatisfy { $0 == t0 + WebRTCTransport.reportInterval })
        core.tickTransports(now: t0 + ms(20))  // none due: none visited
        #expect(core.tickDue.allSatisfy { $0 == t0 + WebRTCTransport.reportInterval })

        try core.produce(transports[2].id, producerID: ProducerID(rawValue: "p"), parameters: ProducerParameters(
            kind: .audio, mid: "0", codec: .opus, ssrc: 0x1111))
        #expect(core.tickDue[transports[2].tickIndex] == 0)

        core.closeTransport(transports[0].id)
        core.closeTransport(transports[3].id)
        #expect(core.tickList.count == 2)
        #expect(core.tickList.count == core.tickDue.count)
        for (i, transport) in core.tickList.enumerated() { #expect(transport.tickIndex == i) }
        #expect(Set(core.tickList.map(\.id)) == [transports[1].id, transports[2].id])
        #expect(core.tickDue[transports[2].tickIndex] == 0)
        // A closed transport asking for a tick touches nobody else's.
        core.tickSoon(transports[0])
        #expect(core.tickDue[transports[1].tickIndex] == t0 + WebRTCTransport.reportInterval)
    }
}
