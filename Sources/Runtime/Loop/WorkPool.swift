import Dispatch
import Foundation
import Synchronization

/// Threads for work that may block — the store, key generation, a slow handler — kept apart from the
/// event loops (whose sockets would stall) and from Swift's cooperative pool (one thread per core, which
/// blocking work starves). Jobs wait in one shared queue and any free thread takes the next, so one long
/// job holds back nothing but itself. Tasks reach it with `Task(executorPreference: pool)`.
///
/// Loops a job posts to are woken when the job returns, not at each post (see `EventLoop.execute`): one
/// wake-up of the loop, and one context switch on a busy CPU, per burst instead of per response or event.
public final class WorkPool: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var head = 0
        var stopping = false
    }

    private let queue = Mutex(Queue())
    private let ready = DispatchSemaphore(value: 0)
    public let threads: Int

    public init(threads: Int, name: String = "work") {
        self.threads = max(1, threads)
        for i in 0..<self.threads {
            let thread = Thread { [self] in self.run() }
            thread.name = "\(name)-\(i)"
            thread.start()
        }
    }

    /// A pool sized for blocking work: twice the CPUs this process may run on, at least four threads.
    public convenience init(name: String = "work") {
        self.init(threads: max(4, 2 * Self.usableProcessorCount), name: name)
    }

    /// The CPUs this process may run on (its affinity mask: `taskset`, a container's cpuset), not the
    /// machine's count; the machine's if the mask cannot be read.
    public static var usableProcessorCount: Int {
        // sched_getaffinity is GNU-only C; the kernel shows the same mask as `Cpus_allowed:` (hex words).
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) {
            let n = line.dropFirst("Cpus_allowed:".count).reduce(0) { count, c in
                count + (c.hexDigitValue.map { $0.nonzeroBitCount } ?? 0)
            }
            if n > 0 { return n }
        }
        return ProcessInfo.processInfo.activeProcessorCount
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        ready.signal()
    }

    /// Lets the threads finish what is queued, then end.
    public func shutdown() {
        queue.withLock { $0.stopping = true }
        for _ in 0..<threads { ready.signal() }
    }

    private func run() {
        let wakeUps = DeferredWakeUps()
        DeferredWakeUps.install(wakeUps)
        defer { DeferredWakeUps.install(nil) }
        while true {
            ready.wait()
            let next: UnownedJob?? = queue.withLock { q in
                guard q.head < q.jobs.count else { return q.stopping ? .some(nil) : nil }
                let job = q.jobs[q.head]
                q.head += 1
                if q.head > 1024 && q.head * 2 > q.jobs.count {
                    q.jobs.removeFirst(q.head)
                    q.head = 0
                }
                return .some(job)
            }
            guard let next else { continue }
            guard let job = next else { return }
            job.runSynchronously(on: asUnownedTaskExecutor())
            wakeUps.flush()
        }
    }
}
