/// An adaptive jitter buffer for one RTP audio stream of 20 ms packets: pure, with time injected.
///
/// `insert` files each arriving packet by sequence number (reordering, dropping duplicates and
/// packets whose turn has passed); `pop(now:)`, called once per 20 ms tick, returns the packet due,
/// a `.conceal` for a gap, or `.empty`. Playout starts once the target delay is buffered. The
/// target follows the RFC 3550 interarrival jitter (three times the jitter plus one frame, to the
/// nearest frame), grows by a frame for each late packet (taken by concealing once without
/// advancing), decays after a quiet while, and stays within `minimumDelay...maximumDelay`. When the
/// buffer holds a frame or more above target at every tick for half a second it skips one packet to
/// bring latency down.
///
/// All storage (slots and payload bytes) is allocated at `init`; insert and pop never allocate.
/// Confined to one thread; no C and no Foundation, so it is fuzzed as plain Swift.
public struct JitterBuffer {
    public struct Configuration: Sendable, Hashable {
        /// RTP clock rate of the payload (48000 for Opus, 8000 for G.711).
        public var clockRate = 48_000
        public var frameMilliseconds = 20
        public var minimumDelayMilliseconds = 20
        public var maximumDelayMilliseconds = 200
        /// Packets held at most (the window ahead of playout).
        public var capacity = 32
        /// Largest payload accepted, in bytes.
        public var maxPayload = 1500
        /// Concealed frames after the buffer runs dry before it goes back to buffering.
        public var maxConcealedWhenDry = 5
        public init() {}
    }

    private enum SlotState: UInt8 { case empty, held, played }

    public let configuration: Configuration
    public private(set) var statistics = JitterStatistics()

    private var arena: [UInt8]
    private var slotExt: [Int64]
    private var slotState: [SlotState]
    private var slotTimestamp: [UInt32]
    private var slotLength: [Int]

    private var started = false
    private var playing = false
    private var bufferingSince: UInt64?
    /// Extended (wrap-free) sequence number of the packet due next, and the highest seen.
    private var nextExt: Int64 = 0
    private var highestExt: Int64 = 0
    /// Everything below this was played, concealed or skipped: never due again.
    private var playedThrough: Int64 = 0
    private var held = 0
    private var dryRun = 0
    private var excessTicks = 0
    private var pendingStretch = 0

    private var jitterNanoseconds = 0.0
    private var lastArrival: UInt64 = 0
    private var lastTimestamp: UInt32 = 0
    private var lateBoostFrames = 0
    private var lastLateAt: UInt64 = 0

    /// A sequence jump this far (in packets) either way is a new stream, not reordering.
    private static let restartDistance: Int64 = 3000
    private static let boostDecayNanoseconds: UInt64 = 2_000_000_000
    private static let excessTicksBeforeShrink = 25
    private static let discontinuityNanoseconds = 500_000_000.0

    public init(_ configuration: Configuration = Configuration()) {
        var c = configuration
        c.capacity = max(4, min(c.capacity, 1024))
        c.maxPayload = max(1, min(c.maxPayload, 65_536))
        c.frameMilliseconds = max(1, c.frameMilliseconds)
        c.clockRate = max(1, c.clockRate)
        c.minimumDelayMilliseconds = max(c.frameMilliseconds, c.minimumDelayMilliseconds)
        c.maximumDelayMilliseconds = max(c.minimumDelayMilliseconds, c.maximumDelayMilliseconds)
        c.maxConcealedWhenDry = max(0, c.maxConcealedWhenDry)
        self.configuration = c
        arena = [UInt8](repeating: 0, count: c.capacity * c.maxPayload)
        slotExt = [Int64](repeating: -1, count: c.capacity)
        slotState = [SlotState](repeating: .empty, count: c.capacity)
        slotTimestamp = [UInt32](repeating: 0, count: c.capacity)
        slotLength = [Int](repeating: 0, count: c.capacity)
        statistics.targetDelayMilliseconds = c.minimumDelayMilliseconds
    }

    /// The delay the buffer currently aims for, in milliseconds.
    public var targetDelayMilliseconds: Int { statistics.targetDelayMilliseconds }

    // MARK: insert

    /// Files one packet that arrived at `arrival` (monotonic nanoseconds).
    public mutating func insert(sequence: UInt16, timestamp: UInt32, payload: UnsafeRawBufferPointer, arrival: UInt64) -> JitterInsertResult {
        guard payload.count <= configuration.maxPayload else {
            statistics.tooLarge += 1
            return .tooLarge
        }
        var result = JitterInsertResult.accepted
        if !started {
            restart(at: sequence)
        }
        var ext = unwrap(sequence)
        let capacity = Int64(configuration.capacity)
        if abs(ext - nextExt) > Self.restartDistance {
            restart(at: sequence)
            statistics.restarts += 1
            result = .restarted
            ext = nextExt
        }
        if ext < nextExt {
            if !playing && ext >= playedThrough && highestExt - ext < capacity {
                nextExt = ext  // reordered while (re)buffering: still in time
            } else {
                let slot = index(ext)
                if slotExt[slot] == ext && slotState[slot] == .played {
                    statistics.duplicates += 1
                    return .duplicate
                }
                statistics.late += 1
                noteLate(at: arrival)
                return .late
            }
        }
        if ext >= nextExt + capacity {
            // A burst longer than the window: let the oldest packets go.
            let newNext = ext - capacity + 1
            while nextExt < newNext {
                let slot = index(nextExt)
                if slotExt[slot] == nextExt && slotState[slot] == .held {
                    slotState[slot] = .empty
                    held -= 1
                    statistics.overflowDrops += 1
                }
                nextExt += 1
            }
            playedThrough = max(playedThrough, nextExt)
        }
        let slot = index(ext)
        if slotExt[slot] == ext && slotState[slot] == .held {
            statistics.duplicates += 1
            return .duplicate
        }
        if slotState[slot] == .held { held -= 1 }  // an older packet outside the window (cannot be due any more)
        let base = slot * configuration.maxPayload
        arena.withUnsafeMutableBytes { dst in
            if payload.count > 0 {
                UnsafeMutableRawBufferPointer(rebasing: dst[base..<(base + payload.count)]).copyMemory(from: payload)
            }
        }
        slotExt[slot] = ext
        slotState[slot] = .held
        slotTimestamp[slot] = timestamp
        slotLength[slot] = payload.count
        held += 1
        statistics.received += 1
        if ext > highestExt { highestExt = ext }
        if bufferingSince == nil && !playing { bufferingSince = arrival }
        updateJitter(timestamp: timestamp, arrival: arrival)
        updateTarget(now: arrival)
        return result
    }

    // MARK: pop

    /// What to play for the tick at `now` (monotonic nanoseconds); call once per frame.
    public mutating func pop(now: UInt64) -> JitterOutput {
        updateTarget(now: now)
        defer { statistics.bufferedMilliseconds = buffered * configuration.frameMilliseconds }
        guard started else { return .empty }
        let frame = configuration.frameMilliseconds
        if !playing {
            guard held > 0, let since = bufferingSince else { return .empty }
            let waited = now >= since ? Int((now - since) / 1_000_000) : 0
            guard buffered * frame >= targetDelayMilliseconds || waited >= targetDelayMilliseconds else { return .empty }
            playing = true
            dryRun = 0
            excessTicks = 0
            pendingStretch = 0
        }
        if pendingStretch > 0 {
            pendingStretch -= 1
            statistics.concealed += 1
            return .conceal(sequence: UInt16(truncatingIfNeeded: nextExt &- 1), next: nil)
        }
        // Shrink: a whole frame above target at every tick for a while → skip the packet due (or the gap) once.
        if buffered * frame >= targetDelayMilliseconds + frame {
            excessTicks += 1
            if excessTicks >= Self.excessTicksBeforeShrink {
                excessTicks = 0
                let slot = index(nextExt)
                if slotExt[slot] == nextExt && slotState[slot] == .held {
                    slotState[slot] = .played
                    held -= 1
                    statistics.shrinkDrops += 1
                }
                nextExt += 1
                playedThrough = nextExt
            }
        } else {
            excessTicks = 0
        }
        let slot = index(nextExt)
        if slotExt[slot] == nextExt && slotState[slot] == .held {
            slotState[slot] = .played
            held -= 1
            nextExt += 1
            playedThrough = nextExt
            dryRun = 0
            statistics.played += 1
            let base = slot * configuration.maxPayload
            return .packet(sequence: UInt16(truncatingIfNeeded: nextExt - 1), timestamp: slotTimestamp[slot],
                           payload: arena[base..<(base + slotLength[slot])])
        }
        if highestExt >= nextExt {
            // A gap with later packets already here: conceal it and move on.
            let sequence = UInt16(truncatingIfNeeded: nextExt)
            nextExt += 1
            playedThrough = nextExt
            dryRun = 0
            statistics.concealed += 1
            return .conceal(sequence: sequence, next: heldPayload(nextExt))
        }
        // Dry: the next packet is late or the talker stopped. Conceal a little without advancing
        // (a late packet then still plays, a frame later), then buffer afresh.
        dryRun += 1
        if dryRun <= configuration.maxConcealedWhenDry {
            statistics.concealed += 1
            return .conceal(sequence: UInt16(truncatingIfNeeded: nextExt), next: nil)
        }
        playing = false
        bufferingSince = nil
        // The silence until the talker resumes is not network jitter: measure afresh from the next packet.
        lastArrival = 0
        statistics.underruns += 1
        return .empty
    }

    // MARK: helpers

    private var buffered: Int { held == 0 ? 0 : Int(max(0, highestExt - nextExt + 1)) }

    private func index(_ ext: Int64) -> Int {
        Int(UInt64(bitPattern: ext) % UInt64(configuration.capacity))
    }

    private func heldPayload(_ ext: Int64) -> ArraySlice<UInt8>? {
        let slot = index(ext)
        guard slotExt[slot] == ext && slotState[slot] == .held else { return nil }
        let base = slot * configuration.maxPayload
        return arena[base..<(base + slotLength[slot])]
    }

    private func unwrap(_ sequence: UInt16) -> Int64 {
        let delta = Int16(bitPattern: sequence &- UInt16(truncatingIfNeeded: highestExt))
        return highestExt + Int64(delta)
    }

    private mutating func restart(at sequence: UInt16) {
        for i in 0..<slotState.count {
            slotState[i] = .empty
            slotExt[i] = -1
        }
        held = 0
        started = true
        playing = false
        bufferingSince = nil
        // Start far from zero so unwrapping below the first sequence stays positive.
        nextExt = Int64(sequence) + (1 << 32)
        highestExt = nextExt
        playedThrough = 0
        dryRun = 0
        excessTicks = 0
        pendingStretch = 0
        lastArrival = 0
    }

    private mutating func updateJitter(timestamp: UInt32, arrival: UInt64) {
        defer {
            lastArrival = arrival
            lastTimestamp = timestamp
        }
        guard lastArrival != 0 else { return }
        let arrivalDelta = Double(Int64(bitPattern: arrival &- lastArrival))
        let mediaDelta = Double(Int32(bitPattern: timestamp &- lastTimestamp)) * 1e9 / Double(configuration.clockRate)
        let d = abs(arrivalDelta - mediaDelta)
        // A timestamp jump (a new talk spurt after DTX, a sender restart) is not network jitter.
        guard d < Self.discontinuityNanoseconds else { return }
        jitterNanoseconds += (d - jitterNanoseconds) / 16
    }

    private mutating func noteLate(at now: UInt64) {
        let maxFrames = configuration.maximumDelayMilliseconds / configuration.frameMilliseconds
        if lateBoostFrames < maxFrames {
            lateBoostFrames += 1
            if playing { pendingStretch += 1 }
        }
        lastLateAt = now
        updateTarget(now: now)
    }

    private mutating func updateTarget(now: UInt64) {
        let frame = configuration.frameMilliseconds
        if lateBoostFrames > 0 && now > lastLateAt && now - lastLateAt >= Self.boostDecayNanoseconds {
            lateBoostFrames -= 1
            lastLateAt = now
        }
        let jitterMs = jitterNanoseconds / 1e6
        statistics.jitterMilliseconds = jitterMs
        let fromJitter = Int((3 * jitterMs).rounded(.up)) + frame
        let wanted = max(fromJitter, (1 + lateBoostFrames) * frame)
        // To the nearest frame: jitter under half a frame is the tick's phase to absorb (a packet is
        // played at the first tick after it arrives), and rounding it up would hold a spare frame for good.
        let rounded = max(frame, (wanted + frame / 2) / frame * frame)
        statistics.targetDelayMilliseconds = min(configuration.maximumDelayMilliseconds, max(configuration.minimumDelayMilliseconds, rounded))
    }
}
