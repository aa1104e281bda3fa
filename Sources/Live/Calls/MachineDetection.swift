/// Answering-machine detection on an outbound call to a phone (`machine_detection` and
/// `advanced_machine_detection` of `POST /v1/calls`): once the call is answered, the far end's first
/// seconds of audio say whether a person or a machine took it (`AnsweringMachineDetector` in Audio),
/// and, in the advanced modes that listen for it, when a voicemail's beep sounds (`BeepDetector`).
///
/// Each finding is an event to the leg's event URL: `status` `human` or `machine`, then for a beep
/// `machine` with `sub_state` `beep_start` (or `beep_timeout` when none came in `beepTimeout` seconds).
/// `hangup` ends a call a machine answered. The standard option and the advanced `detect` and
/// `detect_beep` modes are synchronous: the NCCO starts after the verdict (after the beep, or its
/// time-out, for `detect_beep`); the advanced `default` mode is asynchronous: the NCCO starts at once and
/// the events come as the detector decides.
public struct MachineDetection: Sendable, Equatable {
    public enum Behavior: String, Sendable, CaseIterable {
        case `continue`
        case hangup
    }

    public enum Mode: String, Sendable, CaseIterable {
        /// `machine_detection` (not an advanced mode name).
        case standard
        case `default`
        case detect
        case detectBeep = "detect_beep"
    }

    public var behavior: Behavior
    public var mode: Mode
    /// Seconds to wait for a beep once a machine is found (45–120; 45 by default).
    public var beepTimeout: Int

    public init(behavior: Behavior, mode: Mode = .standard, beepTimeout: Int = 45) {
        self.behavior = behavior
        self.mode = mode
        self.beepTimeout = beepTimeout
    }

    /// The NCCO waits for the verdict.
    public var synchronous: Bool { mode != .default }
    /// Beep detection runs after a machine verdict.
    public var listensForBeep: Bool { mode == .default || mode == .detectBeep }
}

/// What media found on a leg with machine detection.
public enum MachineDetectionResult: Sendable, Equatable {
    case human
    case machine
    case beep
    case beepTimeout
}
