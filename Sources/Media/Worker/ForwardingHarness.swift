import CShims
import Crypto
import Glibc
import Runtime

/// A worker's packet path with no thread, no ICE or DTLS exchange and no socket output, for
/// measuring forwarding in process (MediaLoad's `FanoutBenchmark`, `switchboard load --in-process`).
///
/// Each entry point is one worker operation: transports are keyed directly with fixed SRTP keys
/// and a made-up peer address (`WebRTCTransport.installForBenchmark`), and the send queue counts
/// datagrams and drops them instead of calling `sendmmsg`. Confined to the caller's thread.
package final class ForwardingHarness {
    private let core: WorkerCore

    package init() throws {
        var configuration = MediaConfiguration()
        configuration.bindHost = "127.0.0.1"
        configuration.port = 0
        let certificate = try DTLSCertificate()
        let socket = try UDPSocket(host: "127.0.0.1", port: 0)
        let loop = EventLoop(index: 99)
        core = WorkerCore(index: 0, loop: loop, socket: socket, certificate: certificate, configuration: configuration) { _ in }
        core.queue.discard = true
    }

    package func createRouter(_ id: RouterID) { core.createRouter(id) }

    package func closeRouter(_ id: RouterID) { core.closeRouter(id) }

    /// A transport on `router`; with `connect`, given remote DTLS parameters as a subscriber's
    /// answer would (server role, our own fingerprint), so it holds DTLS state until keyed.
    package func createTransport(_ id: TransportID, router: RouterID, connect: Bool) throws {
        _ = try core.createTransport(router: router, transportID: id)
        if connect {
            try core.connect(id, parameters: DTLSParameters(role: .server, fingerprint: DTLSFingerprintValue(
                algorithm: "sha-256", value: core.certificate.fingerprintSHA256)), remoteUsernameFragment: nil)
        }
    }

    /// Keys SRTP with `keys` in both directions and selects `address`, skipping ICE and DTLS.
    package func install(_ id: TransportID, profile: SRTPProfile, keys: SRTPKeys, address: PeerAddress) throws {
        guard let transport = core.transports[id] else { throw MediaError.notFound("transport \(id)") }
        try transport.installForBenchmark(profile: profile, keys: keys, address: address)
    }

    package func produce(_ id: TransportID, producer: ProducerID, parameters: ProducerParameters) throws {
        try core.produce(id, producerID: producer, parameters: parameters)
    }

    package func consume(_ id: TransportID, consumer: ConsumerID, producer: ProducerID) throws {
        _ = try core.consume(id, consumerID: consumer, producer: producer)
    }

    package func closeConsumer(_ id: ConsumerID) { core.closeConsumer(id) }

    /// Runs `lengths.count` packets, `stride` bytes apart from `input`, through the receive path as
    /// if from `source` (the clock read every 64 packets, the send queue flushed every 32 as after
    /// a receive batch); returns the datagrams that came out and the seconds it took.
    package func forward(
        _ input: UnsafeRawPointer, stride: Int, lengths: [Int], from source: PeerAddress
    ) -> (datagrams: UInt64, seconds: Double) {
        var storage = sockaddr_storage()
        source.write(to: &storage, ipv6Socket: false)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 2048, alignment: 16)
        defer { buffer.deallocate() }

        let sentBefore = core.queue.sent
        let start = sb_monotonic_ns()
        for i in 0..<lengths.count {
            buffer.copyMemory(from: input + i * stride, byteCount: lengths[i])
            if i & 63 == 0 { core.setNow(sb_monotonic_ns()) }
            core.dispatch(buffer, length: lengths[i], source: &storage)
            core.fanout.run(now: core.now, queue: core.queue)
            if i & 31 == 31 { core.queue.flush() }
        }
        core.queue.flush()
        let seconds = Double(sb_monotonic_ns() - start) / 1e9
        return (core.queue.sent - sentBefore, seconds)
    }
}
