import Foundation
import Synchronization
import Live

/// A video archive's recording running in a task of its own (`IndividualArchive`, `ComposedArchive`): the
/// recording polls `shouldStop` between its steps, with its `ArchiveProgress`, and returns what it wrote once
/// stopped — asked to (`stop` returns the outcome to the one who asked), or by itself (an `Ending`, or failing),
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

    /// Why a recording stopped by itself, as the Video API's archives do.
    enum Ending: Sendable {
        /// It recorded `maxDuration` (pauses not counted).
        case maxDuration
        /// Nobody published within `publishWithin` of its start.
        case nothingPublished

        /// The archive's `reason`.
        var reason: String {
            switch self {
            case .maxDuration: "maximum duration exceeded"
            case .nothingPublished: "no stream published within a minute"
            }
        }
    }

    /// Asked to stop, or why it stopped by itself: what `stop` and the recording's own checks share.
    private final class Stopping: Sendable {
        private let state = Mutex<(requested: Bool, ending: Ending?)>((false, nil))
        var requested: Bool { state.withLock { $0.requested } }
        var ending: Ending? { state.withLock { $0.ending } }
        func request() { state.withLock { $0.requested = true } }
        func end(_ why: Ending) { state.withLock { $0.ending = $0.ending ?? why } }
    }

    private let stopping = Stopping()
    private let task: Task<Outcome, Never>

    /// `publishWithin`: how soon a stream must be published once it starts (an archive's minute), or never mind (nil).
    init(maxDuration: Duration = .seconds(14_400), publishWithin: Duration? = nil, ended: @escaping @Sendable (Outcome, Ending?) -> Void,
         record: @escaping @Sendable (_ shouldStop: @escaping @Sendable (ArchiveProgress) -> Bool) async -> Outcome) {
        let stopping = stopping
        task = Task {
            let outcome = await record { progress in
                if stopping.requested { return true }
                if progress.recorded >= maxDuration {
                    stopping.end(.maxDuration)
                } else if let publishWithin, !progress.published, progress.elapsed >= publishWithin {
                    stopping.end(.nothingPublished)
                } else {
                    return false
                }
                return true
            }
            if !stopping.requested { ended(outcome, stopping.ending) }  // no ending: it failed
            return outcome
        }
    }

    /// Stops recording and returns once the file is complete.
    func stop() async -> Outcome {
        stopping.request()
        return await task.value
    }
}

/// Where a recording stands, for `ArchiveRecorder` to decide whether it stops.
struct ArchiveProgress: Sendable {
    /// Time recorded: all but its pauses.
    var recorded: Duration
    /// Time since it started.
    var elapsed: Duration
    /// Whether anyone has published since it started.
    var published: Bool
}

/// An archive is paused while nobody publishes in its session, as the Video API's are: nothing is recorded then
/// (a composed archive's file goes on from where it paused), and its status says so. Tracks the pauses of one
/// recording, reporting each change to `report`; without one (a broadcast) it never pauses.
struct ArchivePause {
    private(set) var since: ContinuousClock.Instant?
    private var before: Duration = .zero
    /// Whether anyone has published since the recording began.
    private(set) var published = false
    let report: (@Sendable (_ paused: Bool) -> Void)?
    /// When the recording began, and whether it has looked for publishers since.
    private let origin: ContinuousClock.Instant
    private var looked = false

    init(origin: ContinuousClock.Instant, report: (@Sendable (_ paused: Bool) -> Void)?) {
        self.origin = origin
        self.report = report
    }

    /// Whether it is paused now that `publishing` says whether anyone publishes.
    mutating func update(publishing: Bool, now: ContinuousClock.Instant) -> Bool {
        published = published || publishing
        defer { looked = true }
        guard let report else { return false }
        if publishing, let since {
            before += now - since
            self.since = nil
            report(false)
        } else if !publishing, since == nil {
            // Nobody at its first look: paused from its start (setting up the files and encoders records nothing).
            since = looked ? now : origin
            report(true)
        }
        return since != nil
    }

    /// How long it has been paused in all, up to `now`.
    func total(at now: ContinuousClock.Instant) -> Duration { before + (since.map { now - $0 } ?? .zero) }

    /// How long a recording that began at `origin` has recorded by `now`: all but its pauses.
    func recorded(since origin: ContinuousClock.Instant, at now: ContinuousClock.Instant) -> Duration { now - origin - total(at: now) }

    /// Where a recording that began at `origin` stands at `now`.
    func progress(since origin: ContinuousClock.Instant, at now: ContinuousClock.Instant) -> ArchiveProgress {
        ArchiveProgress(recorded: recorded(since: origin, at: now), elapsed: now - origin, published: published)
    }
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
