import Dispatch
import Foundation
import Synchronization

/// Threads for work that may block — the store, key generation, a slow handler — kept apart from the
/// event loops (whose sockets would stall) and from Swift's cooperative pool (one thread per core, which
/// blocking work starves). Jobs wait in one shared queue and any free thread takes the next, so one long
/// job holds back nothing but itself. Tasks reach it with `Task(executorPreference: pool)`.
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

    /// A pool sized for blocking work on this machine: twice the cores, at least four threads.
    public convenience init(name: String = "work") {
        self.init(threads: max(4, 2 * ProcessInfo.processInfo.activeProcessorCount), name: name)
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
        }
    }
}
