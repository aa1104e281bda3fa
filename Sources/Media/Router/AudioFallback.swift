/// Whether a link carries a stream's video, or only its audio (the Video API's audio fallback): a subscriber's link
/// (`Consumer.checkAudioFallback`, judged by the loss its receiver reports give) or a publisher's own
/// (`Producer.checkPublisherAudioFallback`, judged by the loss of what reaches the server). Pure: fed, on its
/// transport's tick, a verdict on the video's loss over the last second or more (`LossWindow`), and the time.
///
/// A link losing too much of the video (`poor`) for `warnAfter` is warned of (`disableWarning`), lifted once it has
/// lost little (`good`) for `liftAfter`; poor for `disableAfter` the video is turned off (`disabled`) and only the
/// audio sent. With no video going, no report can show the link has room again, so after `hold` the video is sent
/// again for up to `window` (`probeStarted`): good for `liftAfter` and it stays on (`enabled`); if not, it goes off
/// again (`probeFailed`) and the hold doubles, up to `maximumHold`. Loss rather than the receive-side estimate:
/// an estimate grows only as fast as its sender's rate control lets it (about 8 % a second), so one that has seen
/// only audio would read a link with room as short of the video for tens of seconds after it came back.
struct AudioFallback: Equatable {
    enum Event: Equatable { case disableWarning, disableWarningLifted, disabled, probeStarted, probeFailed, enabled }

    enum State: Equatable { case normal, warned, disabled, probing }

    /// What the subscriber is told of an event (nothing of a probe: its video is tried unannounced).
    static func change(_ event: Event?) -> AudioFallbackChange? {
        switch event {
        case .disableWarning?: .videoDisableWarning
        case .disableWarningLifted?: .videoDisableWarningLifted
        case .disabled?: .videoDisabled
        case .enabled?: .videoEnabled
        case .probeStarted?, .probeFailed?, nil: nil
        }
    }

    /// What the loss says of the link: `poor` (at least `poorLoss`), `good` (at most `goodLoss`), or in between.
    enum Verdict: Equatable {
        case poor, fair, good

        init(lost: Int64, expected: Int64) {
            let fraction = lost * 256 / max(1, expected)
            self = fraction >= Int64(AudioFallback.poorLoss) ? .poor : fraction <= Int64(AudioFallback.goodLoss) ? .good : .fair
        }
    }

    private(set) var state = State.normal
    private var poorSince: UInt64 = 0
    private var goodSince: UInt64 = 0
    private var probeUntil: UInt64 = 0
    private var nextProbe: UInt64 = 0
    private(set) var hold = AudioFallback.minimumHold

    static let warnAfter: UInt64 = 2_000_000_000
    static let disableAfter: UInt64 = 5_000_000_000
    static let liftAfter: UInt64 = 3_000_000_000
    static let minimumHold: UInt64 = 10_000_000_000
    static let maximumHold: UInt64 = 80_000_000_000
    static let window: UInt64 = 6_000_000_000
    /// Fractions lost (256ths, as receiver reports give them): at least `poorLoss` is poor (a tenth), at most
    /// `goodLoss` good (3 %).
    static let poorLoss: UInt8 = 26
    static let goodLoss: UInt8 = 8

    /// Whether the video is being sent (not while `disabled`).
    var sendsVideo: Bool { state != .disabled }

    /// `verdict` nil: nothing to judge by (no video expected, or loss the fallback does not judge): the times a poor
    /// or good link has lasted run on.
    mutating func update(_ verdict: Verdict?, now: UInt64) -> Event? {
        if let verdict {
            if verdict == .poor { if poorSince == 0 { poorSince = max(now, 1) } } else { poorSince = 0 }
            if verdict == .good { if goodSince == 0 { goodSince = max(now, 1) } } else { goodSince = 0 }
        }
        let poorFor = poorSince == 0 ? 0 : now &- poorSince
        let goodFor = goodSince == 0 ? 0 : now &- goodSince
        switch state {
        case .normal:
            guard poorFor >= Self.warnAfter else { return nil }
            state = .warned
            return .disableWarning
        case .warned:
            if poorFor >= Self.disableAfter {
                state = .disabled
                nextProbe = now &+ hold
                return .disabled
            }
            guard goodFor >= Self.liftAfter else { return nil }
            state = .normal
            return .disableWarningLifted
        case .disabled:
            guard now >= nextProbe else { return nil }
            state = .probing
            probeUntil = now &+ Self.window
            // What was reported with no video going says nothing of the link: judged afresh.
            (poorSince, goodSince) = (0, 0)
            return .probeStarted
        case .probing:
            if goodFor >= Self.liftAfter {
                state = .normal
                hold = Self.minimumHold
                return .enabled
            }
            guard now >= probeUntil else { return nil }
            state = .disabled
            hold = min(hold * 2, Self.maximumHold)
            nextProbe = now &+ hold
            return .probeFailed
        }
    }

    /// Judging stops (the subscriber turned the video off itself): back to normal, no event.
    mutating func reset() {
        self = AudioFallback(hold: hold)
    }

    private init(hold: UInt64) { self.hold = hold }
    init() {}
}

/// Loss over windows of a second or more, from cumulative counts of the packets expected (the highest sequence
/// number's advance) and lost: a count taken over one window says nothing of the next, and a receiver report's own
/// fraction covers only its interval (one after an interval with no packet reads 0). A window closes once it is a
/// second long and 20 packets were expected in it (a video starved to a few packets a second is judged over several
/// seconds); one with fewer after `longest` is dropped. `verdict` is the last closed window's, nil while a window
/// stays open past a second; `lastJudged` keeps it meanwhile, until a window is dropped.
struct LossWindow {
    private var start: (at: UInt64, expected: Int64, lost: Int64)?
    private(set) var verdict: AudioFallback.Verdict?
    private(set) var lastJudged: AudioFallback.Verdict?

    static let length: UInt64 = 1_000_000_000
    static let longest: UInt64 = 5_000_000_000
    static let minimumExpected: Int64 = 20

    mutating func update(expected: Int64, lost: Int64, now: UInt64) {
        guard let start else {
            self.start = (now, expected, lost)
            return
        }
        let age = now &- start.at
        guard age >= Self.length else { return }
        let count = expected - start.expected
        if count < Self.minimumExpected {
            verdict = nil
            if age >= Self.longest { (self.start, lastJudged) = ((now, expected, lost), nil) }
            return
        }
        verdict = AudioFallback.Verdict(lost: max(0, lost - start.lost), expected: count)
        lastJudged = verdict
        self.start = (now, expected, lost)
    }

    /// What came before (no video going) says nothing of the link now: judged afresh.
    mutating func reset() { self = LossWindow() }
}
