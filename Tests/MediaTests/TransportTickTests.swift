import Crypto
import Runtime
import Testing
@testable import Media

/// The worker visits a transport on its 20 ms tick only when one of the transport's timers is due:
/// a listener's once every few seconds (its reports), a publisher's or a connecting one's every tick.
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
        let next = listener.tick(now: t0)
        #expect(Self.audioSpread.contains(next - t0))
        // Nothing due in between changes that; the report after is another audio interval later.
        #expect(listener.tick(now: t0 + ms(500)) == next)
        #expect(Self.audioSpread.contains(listener.tick(now: next) - next))
    }

    /// An audio-only transport's report interval: 5 s times 0.5–1.5 (RFC 3550 §6.3.1).
    static let audioSpread = WebRTCTransport.audioReportInterval / 2 ..< WebRTCTransport.audioReportInterval * 3 / 2
    static let videoSpread = WebRTCTransport.videoReportInterval / 2 ..< WebRTCTransport.videoReportInterval * 3 / 2

    @Test("audio-only listeners report at spread times every 2.5–7.5 s; video brings a transport's next report within a second")
    func reportIntervals() throws {
        let publisher = try transport("pub", port: 42_000)
        try core.produce(publisher.id, producerID: ProducerID(rawValue: "a"), parameters: ProducerParameters(
            kind: .audio, mid: "0", codec: .opus, ssrc: 0x2222))
        try core.produce(publisher.id, producerID: ProducerID(rawValue: "v"), parameters: ProducerParameters(
            kind: .video, mid: "1", codec: .vp8, ssrc: 0x3333))
        let listeners = try (0..<20).map { i in
            let t = try transport("l\(i)", port: UInt16(42_001 + i))
            _ = try core.consume(t.id, consumerID: ConsumerID(rawValue: "c\(i)"), producer: ProducerID(rawValue: "a"))
            return t
        }
        let t0 = core.now
        let due = listeners.map { $0.tick(now: t0) - t0 }
        #expect(due.allSatisfy(Self.audioSpread.contains))
        // Listeners who joined together do not all report in the same 20 ms tick.
        #expect(Set(due.map { $0 / ms(20) }).count >= 10)

        // A video consumer on one of them: its next report comes at the video pace, at once on the tick list.
        _ = try core.consume(listeners[0].id, consumerID: ConsumerID(rawValue: "video"), producer: ProducerID(rawValue: "v"))
        #expect(core.tickDue[listeners[0].tickIndex] == 0)
        let next = listeners[0].tick(now: t0 + ms(20))
        #expect(next <= t0 + WebRTCTransport.videoReportInterval)
        #expect(Self.videoSpread.contains(listeners[0].tick(now: next) - next))
        // The others keep theirs.
        #expect(listeners[1].tick(now: t0 + ms(20)) == t0 + due[1])
    }

    @Test("a new producer brings its transport's tick forward; closing transports keeps the tick list whole")
    func tickList() throws {
        let transports = try (0..<4).map { try transport("t\($0)", port: UInt16(41_000 + $0)) }
        let t0 = ms(200_000)
        core.tickTransports(now: t0)
        let due = core.tickDue
        #expect(due.allSatisfy { Self.audioSpread.contains($0 - t0) })
        core.tickTransports(now: t0 + ms(20))  // none due: none visited
        #expect(core.tickDue == due)
        let dueOfSecond = due[transports[1].tickIndex]

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
        #expect(core.tickDue[transports[1].tickIndex] == dueOfSecond)
    }
}
