import CShims
import Glibc
import Synchronization

/// Something registered with an event loop for readiness events on one file descriptor.
/// Confined to the loop thread it was registered on.
public protocol Selectable: AnyObject {
    func handle(events: UInt32)
}

/// Monotonic time in nanoseconds, as seen by every loop and engine.
public struct Instant: Comparable, Hashable, Sendable {
    public var nanoseconds: UInt64
    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
    public static func now() -> Instant { Instant(nanoseconds: sb_monotonic_ns()) }
    public static func < (a: Instant, b: Instant) -> Bool { a.nanoseconds < b.nanoseconds }
    public func adding(_ d: Duration) -> Instant {
        let (s, a) = d.components
        let ns = Int64(s) * 1_000_000_000 + a / 1_000_000_000
        return Instant(nanoseconds: UInt64(max(0, Int64(nanoseconds) + ns)))
    }
    public var milliseconds: UInt64 { nanoseconds / 1_000_000 }
}

/// A handle to a scheduled timer; cancel it on the loop thread.
public struct TimerHandle: Hashable, Sendable { let id: UInt64 }

/// One epoll loop on its own OS thread: readiness events, timers, and a mailbox other threads post jobs to.
///
/// Everything but `mailbox` and `wakeFD` is touched only on the loop's own thread; other threads reach
/// the loop through `execute`, which is what makes the unchecked Sendable conformance sound.
public final class EventLoop: @unchecked Sendable {
    public let index: Int
    private let epfd: Int32
    private let wakeFD: Int32
    private struct Mailbox {
        var jobs: [@Sendable () -> Void] = []
        /// An eventfd wake-up was sent for these jobs and the loop has not taken them yet.
        var signalled = false
    }
    private let mailbox = Mutex(Mailbox())
    private let stopping = Atomic<Bool>(false)
    /// Set once `run` has begun (or a thread was started for it).
    private let started = Atomic<Bool>(false)
    /// Set, under the mailbox lock, once the loop has run its last job: later jobs would never run, and
    /// `stopAndWait` may return.
    private let finished = Atomic<Bool>(false)
    private let threadID = Atomic<UInt>(0)
    private var handlers: [Int32: Selectable] = [:]
    private var spareJobs: [@Sendable () -> Void] = []
    /// Jobs for the end of the current pass (see `executeBeforeWait`); loop thread only.
    private var beforeWaitJobs: [@Sendable () -> Void] = []
    private var spareBeforeWaitJobs: [@Sendable () -> Void] = []
    private var timerHeap: [(deadline: UInt64, id: UInt64)] = []
    private var timerCallbacks: [UInt64: () -> Void] = [:]
    private var nextTimerID: UInt64 = 1
    /// Due timers scheduled during the current `runTimers` pass, held for the next (reused, no allocation).
    private var deferredTimers: [(deadline: UInt64, id: UInt64)] = []
    /// Set by `startThread` before the thread exists, read once on it.
    private var threadName = ""
    private static let wakeToken: UInt64 = UInt64.max

    /// Shared scratch buffer for reads on this loop; valid only during a read callback.
    let readBuffer: UnsafeMutableRawBufferPointer

    public init(index: Int = 0) {
        self.index = index
        epfd = sb_epoll_create()
        wakeFD = sb_eventfd()
        precondition(epfd >= 0 && wakeFD >= 0, "epoll/eventfd unavailable")
        _ = sb_epoll_ctl(epfd, SB_EPOLL_CTL_ADD, wakeFD, SB_EPOLLIN, EventLoop.wakeToken)
        readBuffer = .allocate(byteCount: 65536, alignment: 16)
    }

    deinit {
        close(epfd); close(wakeFD)
        readBuffer.deallocate()
    }

    /// True when called on this loop's thread.
    public var inLoop: Bool { threadID.load(ordering: .acquiring) == UInt(bitPattern: Int(bitPattern: pthread_self())) }

    /// Runs `job` on the loop thread soon. Safe from any thread.
    ///
    /// From a `WorkPool` thread the wake-up is deferred until the pool's current job returns (or 1 ms has
    /// passed since the first deferred one, checked at the next `execute`): the responses and events of a
    /// burst of requests handled in one job then wake the loop once and leave in one pass, so a fan-out
    /// writes them to each socket in one system call. A loop already awake, or woken by any other thread
    /// meanwhile, runs the job at once; order is the mailbox's either way.
    public func execute(_ job: @escaping @Sendable () -> Void) {
        let inLoop = self.inLoop
        let deferring = inLoop ? nil : DeferredWakeUps.current
        let signal = mailbox.withLock { box in
            // A finished loop would hold the job (and all it captures) forever without running it.
            if finished.load(ordering: .relaxed) { return false }
            box.jobs.append(job)
            // On the loop thread the mailbox runs before the next wait, so no wake-up is needed.
            guard !inLoop, deferring == nil, !box.signalled else { return false }
            box.signalled = true
            return true
        }
        if signal { _ = sb_eventfd_signal(wakeFD) }
        deferring?.owe(self)
    }

    /// Sends the wake-up a deferring thread owes, unless the loop was woken meanwhile or has run everything.
    func wakeIfOwed() {
        let signal = mailbox.withLock { box in
            guard !box.jobs.isEmpty, !box.signalled, !finished.load(ordering: .relaxed) else { return false }
            box.signalled = true
            return true
        }
        if signal { _ = sb_eventfd_signal(wakeFD) }
    }

    /// Sends now the wake-ups the calling thread deferred (see `execute`); for work-pool code about to block
    /// until a loop has run something it posted.
    public static func flushDeferredWakeUps() {
        DeferredWakeUps.current?.flush()
    }

    /// Runs `job` on the loop thread once the work that is ready now (I/O, timers, mailbox, and whatever
    /// that work posts) is done, just before the loop waits again. Writes that many handlers queue in one
    /// pass (a burst of pipelined requests fanning out to the same sockets) leave in one system call per
    /// socket; when the loop is idle the job runs as soon as the current job returns. Safe from any thread.
    public func executeBeforeWait(_ job: @escaping @Sendable () -> Void) {
        if inLoop {
            beforeWaitJobs.append(job)
        } else {
            execute { [self] in beforeWaitJobs.append(job) }
        }
    }

    /// Runs `body` on the loop thread and returns its result to an async caller.
    public func submit<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { cont in
            execute { cont.resume(with: Result { try body() }) }
        }
    }

    // MARK: Registration (loop thread only)

    public func register(fd: Int32, events: UInt32, handler: Selectable) {
        handlers[fd] = handler
        if sb_epoll_ctl(epfd, SB_EPOLL_CTL_ADD, fd, events, UInt64(UInt32(bitPattern: fd))) != 0 {
            // Already registered elsewhere under this number: modify instead.
            _ = sb_epoll_ctl(epfd, SB_EPOLL_CTL_MOD, fd, events, UInt64(UInt32(bitPattern: fd)))
        }
    }

    public func modify(fd: Int32, events: UInt32) {
        _ = sb_epoll_ctl(epfd, SB_EPOLL_CTL_MOD, fd, events, UInt64(UInt32(bitPattern: fd)))
    }

    public func unregister(fd: Int32) {
        if handlers.removeValue(forKey: fd) != nil {
            _ = sb_epoll_ctl(epfd, SB_EPOLL_CTL_DEL, fd, 0, 0)
        }
    }

    public var registeredCount: Int { handlers.count }

    // MARK: Timers (loop thread only)

    @discardableResult
    public func schedule(after delay: Duration, _ callback: @escaping () -> Void) -> TimerHandle {
        schedule(at: Instant.now().adding(delay), callback)
    }

    @discardableResult
    public func schedule(at deadline: Instant, _ callback: @escaping () -> Void) -> TimerHandle {
        let id = nextTimerID
        nextTimerID += 1
        timerCallbacks[id] = callback
        heapPush((deadline.nanoseconds, id))
        return TimerHandle(id: id)
    }

    public func cancel(_ timer: TimerHandle?) {
        guard let timer else { return }
        timerCallbacks.removeValue(forKey: timer.id)
    }

    // MARK: Running

    /// Runs the loop on the calling thread until `stop()`.
    public func run() {
        started.store(true, ordering: .releasing)
        threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .releasing)
        let maxEvents: Int32 = 1024
        let datas = UnsafeMutablePointer<UInt64>.allocate(capacity: Int(maxEvents))
        let evs = UnsafeMutablePointer<UInt32>.allocate(capacity: Int(maxEvents))
        defer { datas.deallocate(); evs.deallocate() }
        while !stopping.load(ordering: .relaxed) {
            let timeout = nextTimeoutNanoseconds()
            let n = sb_epoll_wait_ns(epfd, datas, evs, maxEvents, timeout)
            if n > 0 {
                for i in 0..<Int(n) {
                    let token = datas[i]
                    if token == EventLoop.wakeToken {
                        _ = sb_eventfd_drain(wakeFD)
                        continue
                    }
                    let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: token))
                    handlers[fd]?.handle(events: evs[i])
                }
            }
            // Timers first: a timer callback may post jobs from the loop thread, which sends no wake-up,
            // so the mailbox must be drained after it and before the next wait.
            runTimers()
            runMailbox()
            runBeforeWaitJobs()
        }
        runMailbox()
        runBeforeWaitJobs()
        // A stopped loop lets go of what is still registered on it: handlers and timer callbacks usually
        // reference the loop back (a channel keeps its loop), and that cycle would keep the loop, its
        // channels and their descriptors alive for the rest of the process.
        handlers.removeAll()
        timerCallbacks.removeAll()
        timerHeap.removeAll()
        // Released outside the lock: a captured object's deinit may post to this loop again.
        let unrun = mailbox.withLock { box in
            finished.store(true, ordering: .releasing)
            return swapOut(&box.jobs)
        }
        _ = unrun
    }

    private func runBeforeWaitJobs() {
        while !beforeWaitJobs.isEmpty {
            var jobs = spareBeforeWaitJobs
            spareBeforeWaitJobs = []
            swap(&beforeWaitJobs, &jobs)
            for job in jobs { job() }
            jobs.removeAll(keepingCapacity: true)
            spareBeforeWaitJobs = jobs
            // A flush may resume tasks (a writer waiting for room); they run before the loop sleeps.
            runMailbox()
        }
    }

    /// Starts the loop on a new thread named `name` (its first 15 bytes: `ps -L`, `top -H`).
    public func startThread(name: String) {
        started.store(true, ordering: .releasing)
        threadName = name
        let box = Unmanaged.passRetained(self)
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        var tid = pthread_t()
        let rc = pthread_create(&tid, &attr, { raw in
            let loop = Unmanaged<EventLoop>.fromOpaque(raw!).takeRetainedValue()
            loop.threadName.withCString { sb_thread_set_name($0) }
            loop.run()
            return nil
        }, box.toOpaque())
        precondition(rc == 0, "pthread_create failed")
        pthread_detach(tid)
    }

    public func stop() {
        stopping.store(true, ordering: .relaxed)
        _ = sb_eventfd_signal(wakeFD)
    }

    /// Stops the loop and waits until its thread has left `run` (its current job, timers and mailbox
    /// done), up to `timeout`; true when it has. A process must do this before `exit`: `exit` runs the
    /// C libraries' atexit handlers (OpenSSL frees its locks and tables), and a loop thread still
    /// calling into OpenSSL then touches freed memory. On the loop's own thread it only stops (false).
    @discardableResult
    public func stopAndWait(timeout: Duration = .seconds(5)) -> Bool {
        stop()
        guard !inLoop else { return false }
        guard started.load(ordering: .acquiring) else { return true }
        let deadline = sb_monotonic_ns() &+ UInt64(timeout.components.seconds) * 1_000_000_000
            &+ UInt64(timeout.components.attoseconds / 1_000_000_000)
        while !finished.load(ordering: .acquiring) {
            if sb_monotonic_ns() >= deadline { return false }
            usleep(500)
        }
        return true
    }

    /// Whether `run` has returned.
    public var hasFinished: Bool { finished.load(ordering: .acquiring) }

    private func runMailbox() {
        while true {
            // Swap buffers instead of copying: no allocation per wake-up once both have grown.
            var jobs = spareJobs
            spareJobs = []
            mailbox.withLock { box in
                swap(&box.jobs, &jobs)
                // Awake now: the next job posted from another thread needs a wake-up of its own.
                box.signalled = false
            }
            if jobs.isEmpty {
                spareJobs = jobs
                return
            }
            for job in jobs { job() }
            jobs.removeAll(keepingCapacity: true)
            spareJobs = jobs
        }
    }

    /// Until the next timer is due (at most 1 s), in nanoseconds: a timer wakes the loop on its
    /// deadline rather than up to a millisecond after it.
    private func nextTimeoutNanoseconds() -> Int64 {
        while let top = timerHeap.first, timerCallbacks[top.id] == nil { _ = heapPop() }
        guard let top = timerHeap.first else { return 1_000_000_000 }
        let now = sb_monotonic_ns()
        if top.deadline <= now { return 0 }
        return Int64(min(1_000_000_000, top.deadline - now))
    }

    /// Runs the timers that were due when the pass began. One a callback schedules waits for the next
    /// pass, even when already due: a periodic timer that fell behind (the media tick after a long tick)
    /// catches up one run per pass, with the I/O that arrived meanwhile read in between.
    private func runTimers() {
        let now = sb_monotonic_ns()
        let firstNew = nextTimerID
        while let top = timerHeap.first, top.deadline <= now {
            _ = heapPop()
            if top.id >= firstNew {
                deferredTimers.append(top)
                continue
            }
            if let cb = timerCallbacks.removeValue(forKey: top.id) { cb() }
        }
        for timer in deferredTimers { heapPush(timer) }
        deferredTimers.removeAll(keepingCapacity: true)
    }

    private func heapPush(_ e: (deadline: UInt64, id: UInt64)) {
        timerHeap.append(e)
        var i = timerHeap.count - 1
        while i > 0 {
            let p = (i - 1) / 2
            if timerHeap[p].deadline <= timerHeap[i].deadline { break }
            timerHeap.swapAt(p, i); i = p
        }
    }

    private func heapPop() -> (deadline: UInt64, id: UInt64)? {
        guard !timerHeap.isEmpty else { return nil }
        let top = timerHeap[0]
        let last = timerHeap.removeLast()
        if !timerHeap.isEmpty {
            timerHeap[0] = last
            var i = 0
            let n = timerHeap.count
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < n && timerHeap[l].deadline < timerHeap[m].deadline { m = l }
                if r < n && timerHeap[r].deadline < timerHeap[m].deadline { m = r }
                if m == i { break }
                timerHeap.swapAt(m, i); i = m
            }
        }
        return top
    }
}

/// Tasks can prefer a loop as their executor (SE-0417): a request handler started with
/// `Task(executorPreference: loop)` runs on the connection's own thread, so a handler that does not
/// suspend answers without any thread hop.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// A fixed set of event loops, one thread each.
public final class EventLoopGroup: Sendable {
    public let loops: [EventLoop]
    private let counter = Atomic<Int>(0)

    public init(threads: Int, name: String = "loop") {
        loops = (0..<max(1, threads)).map { EventLoop(index: $0) }
        for loop in loops { loop.startThread(name: "\(name)-\(loop.index)") }
    }

    public func next() -> EventLoop {
        let i = counter.wrappingAdd(1, ordering: .relaxed).oldValue
        return loops[abs(i) % loops.count]
    }

    public func shutdown() { for loop in loops { loop.stop() } }

    /// Stops every loop and waits for their threads to leave them (see `EventLoop.stopAndWait`).
    @discardableResult
    public func shutdownAndWait(timeout: Duration = .seconds(5)) -> Bool {
        for loop in loops { loop.stop() }
        return loops.allSatisfy { $0.stopAndWait(timeout: timeout) }
    }
}

/// The value, leaving an empty array behind.
private func swapOut<T>(_ array: inout [T]) -> [T] {
    var taken: [T] = []
    swap(&taken, &array)
    return taken
}

/// The loops a work-pool thread has posted to without waking them, during its current job (see
/// `EventLoop.execute`). One per pool thread, touched only by that thread.
final class DeferredWakeUps {
    /// How long a job may hold back a wake-up it owes, checked whenever it posts again.
    static let limitNanoseconds: UInt64 = 1_000_000
    private var loops: [EventLoop] = []
    private var since: UInt64 = 0

    func owe(_ loop: EventLoop) {
        let now = sb_monotonic_ns()
        if loops.isEmpty { since = now }
        if !loops.contains(where: { $0 === loop }) { loops.append(loop) }
        if now &- since >= Self.limitNanoseconds { flush() }
    }

    func flush() {
        guard !loops.isEmpty else { return }
        for loop in loops { loop.wakeIfOwed() }
        loops.removeAll(keepingCapacity: true)
    }

    /// The calling thread's, while it runs a job for a work pool that defers wake-ups.
    static var current: DeferredWakeUps? {
        pthread_getspecific(key).map { Unmanaged<DeferredWakeUps>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Installs (or with nil removes) the calling thread's; the caller keeps it alive meanwhile.
    static func install(_ w: DeferredWakeUps?) {
        _ = pthread_setspecific(key, w.map { UnsafeRawPointer(Unmanaged.passUnretained($0).toOpaque()) })
    }

    private static let key: pthread_key_t = {
        var k = pthread_key_t()
        precondition(pthread_key_create(&k, nil) == 0, "pthread_key_create failed")
        return k
    }()
}
