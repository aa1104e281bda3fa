import Runtime

/// What the core keeps per trunk: its configuration, last status, and when to ping or register next.
struct TrunkState {
    var config: TrunkConfig
    var status: TrunkStatus
    var nextPing: Instant?
    var nextRegister: Instant?
    var registerCallID = ""
    var registerSequence: UInt32 = 0
    var registerAuthAttempts = 0

    init(config: TrunkConfig) {
        self.config = config
        status = TrunkStatus(name: config.name, registration: config.register ? .pending : .notRequired)
        // Due at once: the first tick sends the first OPTIONS and REGISTER.
        nextPing = config.healthInterval > 0 ? Instant(nanoseconds: 0) : nil
        nextRegister = config.register ? Instant(nanoseconds: 0) : nil
    }

    var nextDeadline: Instant? { [nextPing, nextRegister].compactMap { $0 }.min() }
}
