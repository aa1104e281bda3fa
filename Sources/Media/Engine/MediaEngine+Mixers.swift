/// Mixers: one per room in mixed mode, on the router's worker, ticked with every other mixer of
/// that worker. Its output is a producer, so listeners consume it like any track.
extension MediaEngine {
    /// A new mixer: its id and the producer that carries the mix.
    public struct MixerInfo: Sendable, Hashable {
        public var id: MixerID
        public var output: ProducerID
    }

    /// Creates a mixer in `router` mixing at most `maxSpeakers` loudest inputs; `capacity`
    /// bounds its participants (listeners without a participant do not count).
    public func createMixer(router: RouterID, capacity: Int = 256, maxSpeakers: Int = 5) async throws(MediaError) -> MixerInfo {
        guard (1...10_000).contains(capacity), (1...64).contains(maxSpeakers) else {
            throw .invalid("mixer capacity 1...10000 and speakers 1...64")
        }
        let worker = try worker(router: router)
        let id = MixerID.random()
        let output = ProducerID(rawValue: "pr-mix-" + id.rawValue.dropFirst(3))
        place(mixer: id, output: output, on: worker.index)
        do {
            try await worker.run { core throws(MediaError) in
                try core.createMixer(id, router: router, outputID: output, capacity: capacity, maxSpeakers: maxSpeakers)
            }
        } catch {
            forgetMixer(id, closed: ClosedObjects(producers: [output]))
            throw error
        }
        return MixerInfo(id: id, output: output)
    }

    /// Adds (or replaces) a participant: what it says comes from `source`; what it hears goes to
    /// any consumer bound to it with `bindMixerOutput`. `queueFrames` sizes a `.frames` queue.
    public func addMixerParticipant(_ mixer: MixerID, _ participant: MixerParticipantID, source: MixerSource,
                                    options: MixerParticipantOptions = MixerParticipantOptions(), queueFrames: Int = 100) async throws(MediaError) {
        guard (1...3000).contains(queueFrames) else { throw .invalid("queueFrames 1...3000") }
        try await worker(mixer: mixer).run { core throws(MediaError) in
            try core.addMixerParticipant(mixer, participant: participant, source: source, options: options, queueFrames: queueFrames)
        }
    }

    /// Adds (or replaces) a participant whose audio enters and leaves through a port (a phone leg):
    /// `make` runs on the mixer's worker thread with that worker's loop; the port is closed when the
    /// participant leaves or the mixer closes.
    public func addMixerPort(_ mixer: MixerID, _ participant: MixerParticipantID, options: MixerParticipantOptions = MixerParticipantOptions(),
                             make: @escaping MixerPortFactory) async throws(MediaError) {
        try await worker(mixer: mixer).run { core throws(MediaError) in
            try core.addMixerPort(mixer, participant: participant, options: options, make: make)
        }
    }

    public func removeMixerParticipant(_ mixer: MixerID, _ participant: MixerParticipantID) async throws(MediaError) {
        try await worker(mixer: mixer).run { core throws(MediaError) in try core.removeMixerParticipant(mixer, participant: participant) }
    }

    /// Mute, earmuff, volume, canHear/canSpeak.
    public func setMixerOptions(_ mixer: MixerID, _ participant: MixerParticipantID, _ options: MixerParticipantOptions) async throws(MediaError) {
        guard options.volume.isFinite, options.volume >= 0, options.volume <= 4 else { throw .invalid("volume 0...4") }
        try await worker(mixer: mixer).run { core throws(MediaError) in try core.setMixerOptions(mixer, participant: participant, options: options) }
    }

    /// Sends the mix on `consumer` (of the mixer's output) as `participant` hears it: mix-minus
    /// while it speaks, nothing while earmuffed. Unbound consumers get the shared mix.
    public func bindMixerOutput(_ mixer: MixerID, consumer: ConsumerID, to participant: MixerParticipantID) async throws(MediaError) {
        try await worker(mixer: mixer).run { core throws(MediaError) in
            try core.bindMixerOutput(mixer, consumer: consumer, participant: participant)
        }
    }

    /// Queues mono samples at 48 kHz (whole 20 ms frames) for a `.frames` participant; `end` marks
    /// the last of them (the participant leaves once they have played). Returns what was taken
    /// and the room left, so the caller paces itself.
    public func queueFrames(_ mixer: MixerID, _ participant: MixerParticipantID, samples: [Int16], end: Bool = false) async throws(MediaError) -> QueueState {
        try await worker(mixer: mixer).run { core throws(MediaError) in
            try core.queueFrames(mixer, participant: participant, samples: samples, end: end)
        }
    }

    /// Starts copying the mix into a ring of `frames` 20 ms frames for a recorder: the shared mix,
    /// or what `participant` hears (with what it says on the left channel when `split`), or with
    /// `speakerChannels` (2…32) each speaker on a channel of its own (`participant` on the first, the
    /// others as they are first heard, any beyond the last channel added to it). Idle ticks
    /// add silence; drain it with `drainMixerTap` often enough (the ring drops, never grows).
    public func addMixerTap(_ mixer: MixerID, _ tap: MixerTapID, participant: MixerParticipantID? = nil, split: Bool = false,
                            speakerChannels: Int = 0, frames: Int = 250) async throws(MediaError) {
        guard (5...3000).contains(frames) else { throw .invalid("tap frames 5...3000") }
        guard speakerChannels == 0 || (2...32).contains(speakerChannels) else { throw .invalid("speaker channels 2...32") }
        try await worker(mixer: mixer).run { core throws(MediaError) in
            try core.addMixerTap(mixer, tap: tap, participant: participant, split: split, speakerChannels: speakerChannels, frames: frames)
        }
    }

    /// What a tap captured since the last drain (48 kHz, interleaved when split).
    public func drainMixerTap(_ mixer: MixerID, _ tap: MixerTapID) async throws(MediaError) -> MixerTapSamples {
        try await worker(mixer: mixer).run { core throws(MediaError) in try core.drainMixerTap(mixer, tap: tap) }
    }

    public func removeMixerTap(_ mixer: MixerID, _ tap: MixerTapID) async throws(MediaError) {
        try await worker(mixer: mixer).run { core throws(MediaError) in try core.removeMixerTap(mixer, tap: tap) }
    }

    public func mixerStats(_ mixer: MixerID) async throws(MediaError) -> MixerStats {
        try await worker(mixer: mixer).run { core throws(MediaError) in try core.mixerStats(mixer) }
    }

    /// Closes a mixer and every consumer of its output.
    @discardableResult
    public func closeMixer(_ mixer: MixerID) async throws(MediaError) -> ClosedObjects {
        let worker = try worker(mixer: mixer)
        let closed = try await worker.run { core throws(MediaError) in core.closeMixer(mixer) }
        forgetMixer(mixer, closed: closed)
        return closed
    }

    /// How late each worker's 20 ms ticks ran behind their deadlines since the worker started (or
    /// since the last `reset`), one entry per worker. The mixers send on these ticks, so this is the
    /// jitter the mixing adds to every listener's packets.
    public func tickLateness(reset: Bool = false) async -> [TickLateness] {
        var out: [TickLateness] = []
        for worker in workers {
            let index = worker.index
            if let v = try? await worker.run({ core throws(MediaError) -> TickLateness in
                let (h, work, receive, early, missed) = (core.tickLateness, core.tickWork, core.receiveWork, core.earlyTicks, core.phase.missed)
                if reset { core.resetTickLateness() }
                return TickLateness(worker: index, ticks: h.count, earlyTicks: early, missedTicks: missed, p50Microseconds: h.percentile(0.5) * 1000,
                                    p99Microseconds: h.percentile(0.99) * 1000, p999Microseconds: h.percentile(0.999) * 1000,
                                    workP99Microseconds: work.percentile(0.99) * 1000, workMaxMicroseconds: work.percentile(1) * 1000,
                                    receiveP99Microseconds: receive.percentile(0.99) * 1000,
                                    receiveMaxMicroseconds: receive.percentile(1) * 1000)
            }) {
                out.append(v)
            }
        }
        return out
    }

    /// Each worker thread's scheduling priority: the nice value it asked for and the one it runs at.
    public func threadPriorities() async -> [ThreadPriority] {
        var out: [ThreadPriority] = []
        for worker in workers {
            if let v = try? await worker.run({ core throws(MediaError) in core.threadPriority }) { out.append(v) }
        }
        return out
    }

    /// One worker's tick lateness (microseconds, upper edges of 10 µs buckets).
    public struct TickLateness: Sendable, Hashable, Codable {
        public var worker: Int
        public var ticks: UInt64
        /// Of those, ticks run ahead of their deadline as soon as the packet of the speaker the tick
        /// follows came in (`TickPhase`).
        public var earlyTicks: UInt64
        /// Ticks that ran at their deadline without that speaker's packet, which came after (a frame heard 20 ms late).
        public var missedTicks: UInt64
        public var p50Microseconds: Double
        public var p99Microseconds: Double
        public var p999Microseconds: Double
        /// A tick's own work (mixing, sending, transports' timers) and one receive pass, p99 and the longest.
        public var workP99Microseconds: Double
        public var workMaxMicroseconds: Double
        public var receiveP99Microseconds: Double
        public var receiveMaxMicroseconds: Double
    }
}
