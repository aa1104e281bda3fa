import CShims
import Glibc
import Synchronization

/// What the kernel alone charges for the SFU's output pattern on this machine: one socket
/// sending equal datagrams round-robin to many local sockets with `sendmmsg` in batches of
/// 32, as fast as it can, with no packet work in user space (no routing, no SRTP).
///
/// Receivers are drained by a second thread that polls them without `epoll`, so no wake-ups
/// are charged to the sender: the figure is a floor under what forwarding to as many
/// subscribers over loopback can cost.
public enum UDPSendFloor {
    public struct Result: Sendable {
        public var sent: UInt64
        public var received: UInt64
        public var seconds: Double
        /// CPU time of the sending thread (its system calls and the loopback delivery run in them).
        public var senderCPUSeconds: Double
    }

    /// Sends to `receivers` sockets on 127.0.0.1 for `seconds`. The sending thread runs on CPU
    /// `senderCPU` and the draining thread on `receiverCPU` when given.
    public static func run(receivers: Int, payload: Int, seconds: Double, senderCPU: Int?, receiverCPU: Int?) throws -> Result {
        let sinks = try (0..<max(1, receivers)).map { _ in try UDPSocket(host: "127.0.0.1", port: 0) }
        let destinations = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: sinks.count)
        defer { destinations.deallocate() }
        for (i, sink) in sinks.enumerated() {
            destinations[i] = sockaddr_storage()
            PeerAddress(ipv4: 0x7F00_0001, port: sink.localPort).write(to: destinations + i, ipv6Socket: false)
        }
        let drain = Drain(sinks: sinks, cpu: receiverCPU)
        drain.start()
        defer { drain.stop() }

        if let senderCPU { pinCurrentThread(to: senderCPU) }
        let queue = SendQueue(socket: try UDPSocket(host: "127.0.0.1", port: 0))
        let datagram = [UInt8](repeating: 0x80, count: min(payload, queue.slotCapacity))
        let cpuStart = threadCPUSeconds()
        let start = sb_monotonic_ns()
        let end = start &+ UInt64(seconds * 1e9)
        var next = 0
        datagram.withUnsafeBytes { bytes in
            while sb_monotonic_ns() < end {
                for _ in 0..<256 {
                    queue.reserve().copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                    queue.commit(length: bytes.count, to: destinations + next)
                    next = next + 1 == sinks.count ? 0 : next + 1
                }
            }
        }
        queue.flush()
        let elapsed = Double(sb_monotonic_ns() &- start) / 1e9
        let cpu = threadCPUSeconds() - cpuStart
        drain.stop()
        return Result(sent: queue.sent, received: drain.received, seconds: elapsed, senderCPUSeconds: cpu)
    }

    /// Polls every sink with `recvmmsg` until stopped, counting datagrams.
    private final class Drain: @unchecked Sendable {
        let sinks: [UDPSocket]
        let cpu: Int?
        private let done = Atomic<Bool>(false)
        private var thread = pthread_t()
        private var running = false
        private let count = Atomic<UInt64>(0)
        var received: UInt64 { count.load(ordering: .acquiring) }

        init(sinks: [UDPSocket], cpu: Int?) {
            self.sinks = sinks
            self.cpu = cpu
        }

        func start() {
            let context = Unmanaged.passRetained(self).toOpaque()
            running = pthread_create(&thread, nil, { raw in
                let drain = Unmanaged<Drain>.fromOpaque(raw!).takeRetainedValue()
                drain.loop()
                return nil
            }, context) == 0
        }

        func stop() {
            guard running else { return }
            running = false
            done.store(true, ordering: .releasing)
            pthread_join(thread, nil)
        }

        private func loop() {
            if let cpu { UDPSendFloor.pinCurrentThread(to: cpu) }
            let batch = DatagramBatch(capacity: 64, stride: 2048)
            while !done.load(ordering: .acquiring) {
                var got = 0
                for sink in sinks {
                    while case let n = batch.receive(from: sink), n > 0 { got += n }
                }
                count.add(UInt64(got), ordering: .releasing)
                if got == 0 { usleep(200) }
            }
        }
    }

    static func pinCurrentThread(to cpu: Int) { _ = sb_pin_thread(Int32(cpu)) }

    static func threadCPUSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
