/// Answering-machine detection on an outbound call to a phone (`machine_detection` and
/// `advanced_machine_detection` of `POST /v1/calls`, `machineDetection` and `advancedMachineDetection` of
/// an NCCO `connect` to a phone or SIP endpoint): once the call is answered, the far end's first
/// seconds of audio say whether a person or a machine took it (`AnsweringMachineDetector` in Audio),
/// and, in the advanced modes that listen for it, when a voicemail's beep sounds (`BeepDetector`).
///
/// Each finding is an event to the leg's event URL: `status` `human` or `machine`, then for a beep
/// `machine` with `sub_state` `beep_start` (or `beep_timeout` when none came in `beepTimeout` seconds).
/// `hangup` ends a call a machine answered. The standard option and the advanced `detect` and
/// `detect_beep` modes are synchronous: the NCCO starts after the verdict (after the beep, or its
/// time-out, for `detect_beep`); the advanced `default` mode is asynchronous: the NCCO starts at once and
/// the events come as the detector decides. A `connect` with a synchronous mode bridges its leg only
/// after the verdict; one that hangs up on a machine lets the NCCO go on as if the connect had failed.
public struct MachineDetection: Sendable, Hashable {
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

    /// Why an option is not a machine detection setting: the field (a sub-field of the advanced object
    /// is `advanced.field`) and what is wrong.
    public struct Invalid: Error, Sendable, Equatable {
        public var field: String
        public var reason: String
    }

    /// Reads the standard option (`continue` or `hangup`) and the advanced object (`{behavior: continue,
    /// mode: default, beep_timeout: 45}` by default), which wins when both are given; nil for neither.
    /// The names are the fields' where they were given (the REST API's snake case, the NCCO's camel case), for the error.
    public static func parse(standard: JSONValue?, standardName: String, advanced: JSONValue?,
                             advancedName: String) throws(Invalid) -> MachineDetection? {
        if let advanced {
            guard case .object(let a) = advanced else { throw Invalid(field: advancedName, reason: "must be an object") }
            if let unknown = a.keys.sorted().first(where: { !["behavior", "mode", "beep_timeout"].contains($0) }) {
                throw Invalid(field: "\(advancedName).\(unknown)", reason: "is not an option")
            }
            var detection = MachineDetection(behavior: .continue, mode: .default)
            if let b = a["behavior"] {
                guard let behavior = b.stringValue.flatMap(Behavior.init(rawValue:)) else {
                    throw Invalid(field: "\(advancedName).behavior", reason: "must be continue or hangup")
                }
                detection.behavior = behavior
            }
            if let m = a["mode"] {
                guard let mode = m.stringValue.flatMap(Mode.init(rawValue:)), mode != .standard else {
                    throw Invalid(field: "\(advancedName).mode", reason: "must be default, detect or detect_beep")
                }
                detection.mode = mode
            }
            if let t = a["beep_timeout"] {
                guard let n = t.intValue, (45...120).contains(n) else {
                    throw Invalid(field: "\(advancedName).beep_timeout", reason: "must be 45 to 120 seconds")
                }
                detection.beepTimeout = n
            }
            return detection
        }
        guard let standard else { return nil }
        guard let behavior = standard.stringValue.flatMap(Behavior.init(rawValue:)) else {
            throw Invalid(field: standardName, reason: "must be continue or hangup")
        }
        return MachineDetection(behavior: behavior)
    }
}
