import Synchronization

/// Runs async jobs one at a time, in the order they were added, on one executor: the requests of one
/// HTTP connection or of one realtime socket, so that `rtc:mute` then `rtc:mute false` can never overtake
/// each other. One task runs while jobs wait and takes them one after another, so a burst of jobs costs one
/// hop to the executor, not one per job (and on a work pool, the loops it posts to are woken once for the
/// burst, see `EventLoop.execute`). Holds at most `capacity` waiting jobs; `add` returns false beyond that
/// and the caller refuses the work.
public final class SerialJobs: Sendable {
    public typealias Job = @Sendable () async -> Void

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var running = false
        var waiting: Int { jobs.count - head }
    }

    public let capacity: Int
    let executor: any TaskExecutor
    private let state = Mutex(State())

    public init(capacity: Int, executor: any TaskExecutor) {
        self.capacity = capacity
        self.executor = executor
    }

    public func add(_ job: @escaping Job) -> Bool {
        let start: Bool? = state.withLock { s in
            guard s.waiting < capacity else { return nil }
            s.jobs.append(job)
            if s.running { return false }
            s.running = true
            return true
        }
        guard let start else { return false }
        if start { Task(executorPreference: executor) { await self.drain() } }
        return true
    }

    private func drain() async {
        while let job = next() { await job() }
    }

    private func next() -> Job? {
        state.withLock { s in
            guard s.head < s.jobs.count else {
                s.jobs.removeAll(keepingCapacity: true)
                s.head = 0
                s.running = false
                return nil
            }
            let job = s.jobs[s.head]
            s.head += 1
            // A queue that never empties (a busy connection) still lets go of the jobs it has run.
            if s.head >= 64 && s.head * 2 >= s.jobs.count {
                s.jobs.removeFirst(s.head)
                s.head = 0
            }
            return job
        }
    }
}
