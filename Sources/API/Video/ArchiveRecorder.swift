import Foundation
import Live

/// A video archive's recording running in a task of its own (`IndividualArchive`, `ComposedArchive`): the
/// recording polls `shouldStop` between its steps and returns what it wrote once stopped — asked to (`stop`
/// returns the outcome to the one who asked), or by itself (at `maxDuration`, or failing as it starts), when
/// `ended` hears of it.
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

    init(maxDuration: Duration = .seconds(7_200), ended: @escaping @Sendable (Outcome) -> Void,
         record: @escaping @Sendable (_ shouldStop: @escaping @Sendable () -> Bool) async -> Outcome) {
        let stopRequested = stopRequested
        let clock = ContinuousClock()
        let deadline = clock.now + maxDuration
        task = Task {
            let outcome = await record { stopRequested.isSet || clock.now >= deadline }
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
