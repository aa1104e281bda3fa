import Synchronization

/// Runs async jobs one at a time, in the order they were added: a realtime session's requests, so
/// that `rtc:mute` then `rtc:mute false` can never overtake each other. Holds at most `capacity`
/// waiting jobs; `add` returns false beyond that and the caller refuses the request.
final class SerialJobs: Sendable {
    typealias Job = @Sendable () async -> Void

    private struct State {
        var jobs: [Job] = []
        var head = 0
        var running = false
        var waiting: Int { jobs.count - head }
    }

    let capacity: Int
    let executor: any TaskExecutor
    private let state = Mutex(State())

    init(capacity: Int, executor: any TaskExecutor) {
        self.capacity = capacity
        self.executor = executor
    }

    func add(_ job: @escaping Job) -> Bool {
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
            return job
        }
    }
}
