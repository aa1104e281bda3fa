import Foundation
import Synchronization
import Live

/// A video archive's recording running in a task of its own (`IndividualArchive`, `ComposedArchive`): the
/// recording polls `shouldStop` between its steps, with how long it has recorded (pauses not counted), and
/// returns what it wrote once stopped — asked to (`stop` returns the outcome to the one who asked), or by itself
/// (once it has recorded `maxDuration`, as the Video API counts an archive's length, or failing as it starts),
/// when `ended` hears of it.
final class ArchiveRecorder: Sendable {
    struct Outcome: Sendable {
        /// The finished file.
        var file: String
        var size: Int
        /// Seconds recorded.
        var duration: Int
        var failure: String?
    }

    private let stopRequested = StopFlag()
    private let task: Task<Outcome, Never>

    init(maxDuration: Duration = .seconds(14_400), ended: @escaping @Sendable (Outcome) -> Void,
         record: @escaping @Sendable (_ shouldStop: @escaping @Sendable (_ recorded: Duration) -> Bool) async -> Outcome) {
        let stopRequested = stopRequested
        task = Task {
            let outcome = await record { recorded in stopRequested.isSet || recorded >= maxDuration }
            if !stopRequested.isSet { ended(outcome) }
            return outcome
        }
    }

    /// Stops recording and returns once the file is complete.
    func stop() async -> Outcome {
        stopRequested.set()
        return await task.value
    }
}

/// An archive is paused while nobody publishes in its session, as the Video API's are: nothing is recorded then
/// (a composed archive's file goes on from where it paused), and its status says so. Tracks the pauses of one
/// recording, reporting each change to `report`; without one (a broadcast) it never pauses.
struct ArchivePause {
    private(set) var since: ContinuousClock.Instant?
    private var before: Duration = .zero
    let report: (@Sendable (_ paused: Bool) -> Void)?

    init(report: (@Sendable (_ paused: Bool) -> Void)?) {
        self.report = report
    }

    /// Whether it is paused now that `publishing` says whether anyone publishes.
    mutating func update(publishing: Bool, now: ContinuousClock.Instant) -> Bool {
        guard let report else { return false }
        if publishing, let since {
            before += now - since
            self.since = nil
            report(false)
        } else if !publishing, since == nil {
            since = now
            report(true)
        }
        return since != nil
    }

    /// How long it has been paused in all, up to `now`.
    func total(at now: ContinuousClock.Instant) -> Duration { before + (since.map { now - $0 } ?? .zero) }

    /// How long a recording that began at `origin` has recorded by `now`: all but its pauses.
    func recorded(since origin: ContinuousClock.Instant, at now: ContinuousClock.Instant) -> Duration { now - origin - total(at: now) }
}

/// The minute an archive or a broadcast outlives its session's last client, as the Video API's do: a client back
/// by then (one whose connection dropped, say) finds it still running. Counted from the last time the session
/// ended, whatever came and went before.
final class SessionLinger: Sendable {
    static let time: Duration = .seconds(60)

    /// Each session's endings so far: a wait whose count moved on was overtaken by a later ending.
    private let endings = Mutex<[String: Int]>([:])
    private let hub: VideoHub

    init(hub: VideoHub) {
        self.hub = hub
    }

    /// Waits a minute after the session ended; whether it stayed without clients all that time.
    func waitOut(_ sessionID: String) async -> Bool {
        let mine = endings.withLock { e in
            e[sessionID, default: 0] += 1
            return e[sessionID]!
        }
        try? await Task.sleep(for: Self.time)
        let last = endings.withLock { e in
            let last = e[sessionID] == mine
            if last { e[sessionID] = nil }
            return last
        }
        return last && hub.connections(sessionID: sessionID).isEmpty
    }
}
