import Foundation
import Runtime
import Synchronization
import Testing

@Suite("Event loop passes")
struct EventLoopTests {
    final class Log: Sendable {
        let entries = Mutex<[String]>([])
        func add(_ s: String) { entries.withLock { $0.append(s) } }
        var all: [String] { entries.withLock { $0 } }

        /// Waits (up to 5 s) until `count` entries are in.
        func wait(for count: Int) async throws -> [String] {
            for _ in 0..<500 {
                let now = all
                if now.count >= count { return now }
                try await Task.sleep(for: .milliseconds(10))
            }
            return all
        }
    }

    final class Token: Sendable {}

    /// A timer callback that captures its loop forms a cycle (loop → timer → loop); a stopped loop must
    /// break it, or the loop and everything registered on it outlive the group that owned them.
    @Test("a stopped loop releases its pending timers and what they captured")
    func stoppedLoopReleasesTimers() async throws {
        weak var weakToken: Token?
        let loop = EventLoop()
        loop.startThread(name: "test")
        do {
            let token = Token()
            weakToken = token
            let scheduled = Log()
            loop.execute {
                _ = loop.schedule(after: .seconds(3600)) { _ = (token, loop) }
                scheduled.add("timer")
            }
            #expect(try await scheduled.wait(for: 1) == ["timer"])
        }
        #expect(weakToken != nil)
        loop.stop()
        for _ in 0..<500 where weakToken != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakToken == nil)
    }

    /// The media tick reschedules itself; after a long tick the next deadline is already past, and the
    /// packets that arrived meanwhile must be read before it runs, or every line looks dry.
    @Test("a timer a timer callback schedules, already due, runs in the next pass: after what this pass posted")
    func dueTimerWaitsForNextPass() async throws {
        let loop = EventLoop()
        loop.startThread(name: "test")
        defer { loop.stop() }
        let log = Log()
        loop.execute {
            loop.schedule(at: Instant.now()) {
                log.add("tick 1")
                loop.execute { log.add("between") }
                loop.schedule(at: Instant(nanoseconds: 1)) { log.add("tick 2") }
            }
        }
        #expect(try await log.wait(for: 3) == ["tick 1", "between", "tick 2"])
    }

    @Test("before-wait jobs run after the mailbox empties, even jobs the mailbox posts later")
    func beforeWaitAfterMailbox() async throws {
        let loop = EventLoop()
        loop.startThread(name: "test")
        defer { loop.stop() }
        let log = Log()
        loop.execute {
            log.add("A")
            loop.executeBeforeWait { log.add("flush") }
            loop.execute {
                log.add("B")
                loop.execute { log.add("C") }
            }
        }
        #expect(try await log.wait(for: 4) == ["A", "B", "C", "flush"])
    }

    @Test("work a before-wait job posts runs before the loop sleeps, in order")
    func beforeWaitPostsMore() async throws {
        let loop = EventLoop()
        loop.startThread(name: "test")
        defer { loop.stop() }
        let log = Log()
        loop.execute {
            loop.executeBeforeWait {
                log.add("flush 1")
                loop.execute { log.add("job") }
                loop.executeBeforeWait { log.add("flush 2") }
            }
        }
        #expect(try await log.wait(for: 3) == ["flush 1", "job", "flush 2"])
    }

    @Test("a before-wait job posted from another thread wakes the loop and runs on it")
    func fromAnotherThread() async throws {
        let loop = EventLoop()
        loop.startThread(name: "test")
        defer { loop.stop() }
        let log = Log()
        try await Task.sleep(for: .milliseconds(20))  // the loop is asleep in epoll_wait
        loop.executeBeforeWait { log.add(loop.inLoop ? "on loop" : "elsewhere") }
        #expect(try await log.wait(for: 1) == ["on loop"])
    }

    @Test("stopAndWait returns only once the loop thread has finished the job it was running and left the loop")
    func stopAndWaitJoins() async throws {
        let loop = EventLoop()
        loop.startThread(name: "test-stop")
        let log = Log()
        loop.execute {
            log.add("started")
            usleep(300_000)  // a long job: a DTLS handshake step, a tick over many peers
            log.add("finished")
        }
        _ = try await log.wait(for: 1)
        // Plain `stop()` returns at once, with the job still running; exiting then races the loop.
        #expect(loop.stopAndWait(timeout: .seconds(10)))
        #expect(log.all == ["started", "finished"])
        #expect(loop.hasFinished)
    }

    @Test("stopAndWait on a loop never started returns at once; a group waits for every loop")
    func stopAndWaitUnstarted() {
        #expect(EventLoop().stopAndWait(timeout: .seconds(1)))
        let group = EventLoopGroup(threads: 3, name: "test-group")
        #expect(group.shutdownAndWait(timeout: .seconds(10)))
        let allFinished = group.loops.allSatisfy { $0.hasFinished }
        #expect(allFinished)
    }
}
