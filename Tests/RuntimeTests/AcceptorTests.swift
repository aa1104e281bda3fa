import Foundation
import Glibc
import Synchronization
import Testing
@testable import Runtime

/// The acceptor out of descriptors: it sheds waiting connections with its spare descriptor and, when even
/// that fails, stops watching the listener for a while instead of spinning on a readable listener.
@Suite("Acceptor out of descriptors")
struct AcceptorTests {
    /// `accept4` that fails with EMFILE while `exhausted` says so, counting its calls. `script` decides the
    /// first calls (true: the call goes through, as the one made with the spare descriptor closed would).
    final class FlakyAccept: Sendable {
        let exhausted = Mutex(true)
        let calls = Atomic<Int>(0)
        let script = Mutex<[Bool]>([])

        func call(_ fd: Int32, _ addr: UnsafeMutablePointer<sockaddr>?, _ len: UnsafeMutablePointer<socklen_t>?) -> Int32 {
            calls.wrappingAdd(1, ordering: .relaxed)
            let passes = script.withLock { s in s.isEmpty ? nil : s.removeFirst() } ?? !exhausted.withLock { $0 }
            if !passes {
                errno = EMFILE
                return -1
            }
            return Acceptor.systemAccept(fd, addr, len)
        }
    }

    final class Rig: Sendable {
        let group = EventLoopGroup(threads: 1, name: "acceptor-test")
        let listener: TCPListener
        let metrics = Metrics()
        let shed = Mutex<[Int32]>([])
        let accepted = Mutex<[Int32]>([])
        let flaky = FlakyAccept()
        let acceptor: Mutex<Acceptor?> = Mutex(nil)

        init() throws {
            listener = try TCPListener(address: SocketAddress(host: "127.0.0.1", port: 0))
        }

        func start() async throws {
            let loop = group.loops[0]
            try await loop.submit { [self] in
                let made = Acceptor(listener: listener, loop: loop, metrics: metrics, accept: flaky.call,
                                    onShed: { [self] fd in shed.withLock { $0.append(fd) }; close(fd) },
                                    onAccept: { [self] fd, _ in accepted.withLock { $0.append(fd) }; close(fd) })
                acceptor.withLock { $0 = made }
            }
        }

        func connect() throws -> Int32 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = listener.address.port.bigEndian
            addr.sin_addr.s_addr = inet_addr("127.0.0.1")
            let rc = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            #expect(rc == 0)
            return fd
        }

        func stop() async {
            if let a = acceptor.withLock({ $0 }) { await a.stopOnLoop() }
            listener.close()
            group.shutdown()
        }
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<300 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
    }

    @Test("with the spare descriptor it accepts and sheds the waiting connection, and counts it")
    func shedsWithTheSpare() async throws {
        let rig = try Rig()
        rig.flaky.script.withLock { $0 = [false, true] }  // EMFILE, then the accept made with the spare closed
        try await rig.start()
        let client = try rig.connect()
        defer { close(client) }
        try await waitUntil { rig.shed.withLock { $0.count } == 1 }
        #expect(rig.shed.withLock { $0.count } == 1)
        #expect(rig.accepted.withLock { $0.isEmpty })
        #expect(rig.metrics.counter("switchboard_accept_descriptor_exhausted_total") >= 1)
        // The peer sees its connection closed rather than hanging.
        var byte: UInt8 = 0
        var tv = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        #expect(recv(client, &byte, 1, 0) == 0)
        await rig.stop()
    }

    @Test("when even the spare cannot help it pauses instead of spinning, then accepts once descriptors return")
    func pausesAndRecovers() async throws {
        let rig = try Rig()
        try await rig.start()
        let client = try rig.connect()
        defer { close(client) }
        let started = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(500))
        // A spinning loop calls accept hundreds of thousands of times a second; paused for 100 ms after each
        // failure, it calls twice per pause (judged by the time that really passed, however loaded the machine).
        let calls = rig.flaky.calls.load(ordering: .relaxed)
        let elapsed = (ContinuousClock.now - started) / .seconds(1)
        #expect(calls > 0 && Double(calls) < 30 * elapsed + 10, "accept called \(calls) times in \(elapsed) s")
        rig.flaky.exhausted.withLock { $0 = false }
        try await waitUntil { rig.accepted.withLock { $0.count } == 1 }
        #expect(rig.accepted.withLock { $0.count } == 1)
        await rig.stop()
    }
}
