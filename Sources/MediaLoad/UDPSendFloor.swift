import CShims
import Glibc
import Media
import Synchronization

/// What the kernel alone charges for the SFU's output pattern on this machine: one socket
/// sending equal datagrams round-robin to many local sockets with `sendmmsg` in batches of
/// 32, as fast as it can, with no packet work in user space (no routing, no SRTP).
///
/// Flat out (no `burstsPerSecond`), receivers are drained by a second thread that polls them
/// without `epoll`, so no wake-ups are charged to the sender: the figure is a floor under what
/// forwarding to as many subscribers over loopback can cost.
///
/// Paced, it sends what an SFU sends for `burstsPerSecond` input packets: a burst of one datagram
/// per receiver, then sleeps until the next is due; the receivers wait in `epoll`, as the load
/// generator's do, so the sender pays the kernel's wake-ups and its own return from idle as a
/// server forwarding that load does. That is the kernel's share of the same pattern at the same rate.
///
/// With `segments` above 1 each receiver gets that many datagrams in a row, queued as one run
/// (`SendQueue.commitSegment`) and sent as one UDP GSO message: the floor under a server whose
/// receive batches hold that many packets of a publisher.
public enum UDPSendFloor {
    public struct Result: Sendable {
        public var sent: UInt64 = 0
        public var received: UInt64 = 0
        public var seconds: Double = 0
        /// CPU time of the sending thread (its system calls and the loopback delivery run in them).
        public var senderCPUSeconds: Double = 0
    }

    /// Sends to `receivers` sockets on 127.0.0.1 for `seconds`, from a thread on CPU `senderCPU`
    /// while a thread on CPU `receiverCPU` drains them (each pinned when given). The caller's
    /// thread only waits.
    public static func run(
        receivers: Int, payload: Int, seconds: Double, burstsPerSecond: Double? = nil, segments: Int = 1, senderCPU: Int?,
        receiverCPU: Int?
    ) throws -> Result {
        let sinks = try (0..<max(1, receivers)).map { _ in try UDPSocket(host: "127.0.0.1", port: 0) }
        let queue = SendQueue(socket: try UDPSocket(host: "127.0.0.1", port: 0))
        let destinations = UnsafeMutablePointer<sockaddr_storage>.allocate(capacity: sinks.count)
        defer { destinations.deallocate() }
        for (i, sink) in sinks.enumerated() {
            destinations[i] = sockaddr_storage()
            PeerAddress(ipv4: 0x7F00_0001, port: sink.localPort).write(to: destinations + i, ipv6Socket: false)
        }
        let shared = Shared()
        // Written by the sending thread, read after joining it.
        nonisolated(unsafe) var result = Result()
        nonisolated(unsafe) let target = UnsafeMutableRawPointer(destinations)

        let drain = try spawn(cpu: receiverCPU) {
            let batch = DatagramBatch(capacity: 64, stride: 2048)
            var received: UInt64 = 0
            /// Reads `sink` until it is empty; how many datagrams that was.
            func drain(_ sink: UDPSocket) -> UInt64 {
                var got: UInt64 = 0
                while case let n = batch.receive(from: sink), n > 0 { got += UInt64(n) }
                return got
            }
            if burstsPerSecond != nil {
                let epoll = sb_epoll_create()
                defer { close(epoll) }
                for (i, sink) in sinks.enumerated() { _ = sb_epoll_ctl(epoll, SB_EPOLL_CTL_ADD, sink.fd, SB_EPOLLIN, UInt64(i)) }
                var ready = [UInt64](repeating: 0, count: 64)
                var events = [UInt32](repeating: 0, count: 64)
                while !shared.done.load(ordering: .acquiring) {
                    let n = sb_epoll_wait(epoll, &ready, &events, 64, 20)
                    for k in 0..<max(0, Int(n)) { received += drain(sinks[Int(ready[k])]) }
                }
            } else {
                while !shared.done.load(ordering: .acquiring) {
                    let got = sinks.reduce(0) { $0 + drain($1) }
                    received += got
                    if got == 0 { usleep(200) }
                }
            }
            // Loopback delivers inside the sender's call, so whatever it sent is queued by now.
            received += sinks.reduce(0) { $0 + drain($1) }
            shared.received.store(received, ordering: .releasing)
        }
        let sender = try spawn(cpu: senderCPU) {
            let addresses = target.assumingMemoryBound(to: sockaddr_storage.self)
            let datagram = [UInt8](repeating: 0x80, count: min(payload, queue.slotCapacity))
            let cpuStart = threadCPUSeconds()
            let start = sb_monotonic_ns()
            let end = start &+ UInt64(seconds * 1e9)
            var next = 0
            datagram.withUnsafeBytes { bytes in
                func send(_ count: Int) {
                    for _ in 0..<count {
                        for _ in 0..<segments {
                            queue.reserve().copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
                            // One datagram per message (`commit`) unless runs were asked for, even to one receiver.
                            if segments == 1 {
                                queue.commit(length: bytes.count, to: addresses + next)
                            } else {
                                queue.commitSegment(length: bytes.count, to: addresses + next)
                            }
                        }
                        next = next + 1 == sinks.count ? 0 : next + 1
                    }
                }
                if let burstsPerSecond {
                    let interval = UInt64(1e9 / max(1, burstsPerSecond))
                    var due = start
                    while due < end {
                        sleepUntil(due)
                        send(sinks.count)
                        queue.flush()
                        due &+= interval
                    }
                } else {
                    while sb_monotonic_ns() < end { send(256) }
                }
            }
            queue.flush()
            result.seconds = Double(sb_monotonic_ns() &- start) / 1e9
            result.senderCPUSeconds = threadCPUSeconds() - cpuStart
            result.sent = queue.sent
        }
        pthread_join(sender, nil)
        shared.done.store(true, ordering: .releasing)
        pthread_join(drain, nil)
        result.received = shared.received.load(ordering: .acquiring)
        return result
    }

    private final class Shared: Sendable {
        let done = Atomic<Bool>(false)
        let received = Atomic<UInt64>(0)
    }

    /// Starts `body` on a new thread, pinned to `cpu` when given.
    private static func spawn(cpu: Int?, _ body: @escaping () -> Void) throws(SocketError) -> pthread_t {
        final class Box {
            let run: () -> Void
            init(_ run: @escaping () -> Void) { self.run = run }
        }
        let box = Unmanaged.passRetained(Box {
            if let cpu { _ = sb_pin_thread(Int32(cpu)) }
            body()
        }).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().run()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw SocketError(operation: "pthread_create", code: rc)
        }
        return thread
    }

    /// Sleeps until the monotonic clock reads `ns` (at once when it already has).
    private static func sleepUntil(_ ns: UInt64) {
        var due = timespec(tv_sec: Int(ns / 1_000_000_000), tv_nsec: Int(ns % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, nil) == EINTR {}
    }

    static func threadCPUSeconds() -> Double {
        var t = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t)
        return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
    }
}
