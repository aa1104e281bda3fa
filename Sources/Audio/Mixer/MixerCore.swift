/// The arithmetic of one audio room's 20 ms tick, over buffers allocated once.
///
/// The owner (a media worker) decodes each participant's frame into `setInput`, calls `mix()`,
/// then sends every participant what `output(for:)` says: the `shared` mix (encoded once for all
/// listeners who are not speaking), its own mix (mix-minus-self for each mixed speaker, or a mix
/// restricted by canHear/canSpeak), or silence. Only the `maxSpeakers` loudest unmuted inputs are
/// mixed, so a room of hundreds costs a few mixes per tick, and sums go through `SoftLimiter` so
/// they never wrap. Levels (RFC 6464) and speaking state come from the decoded signal.
///
/// No allocation, lock or logging in `setInput`/`mix`; confined to the worker's thread.
public final class MixerCore {
    public let rate: SampleRate
    public let capacity: Int
    public let maxSpeakers: Int
    /// Inputs quieter than this RFC 6464 level (−dBov) are not candidates for mixing.
    public var activityLevel: UInt8 = 90

    private let n: Int
    private var present: [Bool]
    private var flags: [MixerFlags]
    /// Per slot: hears everyone (no canHear) and is not earmuffed, so without an input of its
    /// own it gets the shared mix whenever no mixed speaker restricts who hears it.
    private var simple: [Bool]
    private var gains: [Int32]  // Q12
    private var inputs: [Int16]
    private var hasInput: [Bool]
    private var energy: [Int64]
    private var levels: [UInt8]
    /// This tick's level of slots whose input the owner did not decode (`setLevel`), else 127.
    private var undecodedLevels: [UInt8]
    private var speaking: [SpeakingDetector]
    private var kinds: [MixerOutput]
    private var outputs: [AudioFrame]
    private var accumulator: [Int32]
    /// The slots mixed this tick, loudest first.
    private var selected: LoudestList
    public private(set) var shared: AudioFrame
    /// True after a tick where no mixed speaker had canSpeak: then every slot that hears everyone,
    /// is not earmuffed and had no input gets `.shared` (or `.silence` when nothing was mixed), so
    /// the owner may send those the shared packet without asking `output(for:)` slot by slot.
    public private(set) var sharedIsUniversal = true
    private let silence: AudioFrame

    public init(capacity: Int, rate: SampleRate, maxSpeakers: Int = 5) {
        self.rate = rate
        self.capacity = max(1, capacity)
        // Each mixed input adds at most 32768 × 4 (volume cap): 1000 of them still fit an Int32 sum.
        self.maxSpeakers = max(1, min(maxSpeakers, 1000))
        n = rate.samplesPerFrame
        present = [Bool](repeating: false, count: self.capacity)
        flags = [MixerFlags](repeating: MixerFlags(), count: self.capacity)
        simple = [Bool](repeating: true, count: self.capacity)
        gains = [Int32](repeating: 4096, count: self.capacity)
        inputs = [Int16](repeating: 0, count: self.capacity * n)
        hasInput = [Bool](repeating: false, count: self.capacity)
        energy = [Int64](repeating: 0, count: self.capacity)
        levels = [UInt8](repeating: 127, count: self.capacity)
        undecodedLevels = [UInt8](repeating: 127, count: self.capacity)
        speaking = [SpeakingDetector](repeating: SpeakingDetector(), count: self.capacity)
        kinds = [MixerOutput](repeating: .silence, count: self.capacity)
        outputs = [AudioFrame](repeating: AudioFrame(rate: rate), count: self.capacity)
        // Each slot's frame gets its own storage now, not at its first write in a tick.
        for i in 0..<self.capacity { outputs[i].clear() }
        accumulator = [Int32](repeating: 0, count: n)
        selected = LoudestList(capacity: self.maxSpeakers)
        shared = AudioFrame(rate: rate)
        silence = AudioFrame(rate: rate)
    }

    // MARK: membership (control path)

    /// Puts a participant in `slot` with `flags` (or updates its flags).
    public func join(_ slot: MixerSlot, flags: MixerFlags = MixerFlags()) {
        guard valid(slot) else { return }
        if !present[slot.rawValue] {
            speaking[slot.rawValue] = SpeakingDetector()
            levels[slot.rawValue] = 127
            undecodedLevels[slot.rawValue] = 127
        }
        present[slot.rawValue] = true
        setFlags(flags, for: slot)
    }

    public func setFlags(_ f: MixerFlags, for slot: MixerSlot) {
        guard valid(slot) else { return }
        flags[slot.rawValue] = f
        simple[slot.rawValue] = f.canHear == nil && !f.earmuffed
        gains[slot.rawValue] = Int32((max(0, min(4, f.volume)) * 4096).rounded())
    }

    public func leave(_ slot: MixerSlot) {
        guard valid(slot) else { return }
        present[slot.rawValue] = false
        hasInput[slot.rawValue] = false
        kinds[slot.rawValue] = .silence
    }

    public func flags(for slot: MixerSlot) -> MixerFlags? { valid(slot) && present[slot.rawValue] ? flags[slot.rawValue] : nil }

    // MARK: tick

    /// This tick's decoded frame of `slot` (a frame at another rate is refused: resample first).
    public func setInput(_ slot: MixerSlot, _ frame: AudioFrame) {
        guard valid(slot), present[slot.rawValue], frame.rate == rate else { return }
        let base = slot.rawValue * n
        inputs.withUnsafeMutableBufferPointer { dst in
            frame.withSamples { src in
                for i in 0..<n { dst[base + i] = src[i] }
            }
        }
        hasInput[slot.rawValue] = true
    }

    /// This tick's level (RFC 6464, -dBov) of a slot whose input the owner did not decode (it ranked below
    /// the loudest by the level its sender stamped): the slot's level and speaking state follow it, and the
    /// slot is not mixed. A slot given a frame by `setInput` in the same tick takes the frame's level.
    public func setLevel(_ slot: MixerSlot, _ level: UInt8) {
        guard valid(slot), present[slot.rawValue] else { return }
        undecodedLevels[slot.rawValue] = min(level, 127)
    }

    /// Mixes the inputs set since the last tick and clears them.
    public func mix() {
        measureAndSelect()
        // The shared mix: everyone selected.
        accumulator.withUnsafeMutableBufferPointer { acc in
            for i in 0..<n { acc[i] = 0 }
            inputs.withUnsafeBufferPointer { input in
                for k in 0..<selected.count {
                    let s = selected[k], g = gains[s], base = s * n
                    for i in 0..<n { acc[i] &+= (Int32(input[base + i]) * g) >> 12 }
                }
            }
            shared.withMutableSamples { out in
                for i in 0..<n { out[i] = SoftLimiter.limit(acc[i]) }
            }
        }
        var restricted = false
        for k in 0..<selected.count where flags[selected[k]].canSpeak != nil { restricted = true }
        sharedIsUniversal = !restricted
        let plain: MixerOutput = selected.count > 0 ? .shared : .silence
        for listener in 0..<capacity {
            guard present[listener] else { continue }
            // Most slots are listeners that hear everyone: no per-speaker checks for them.
            kinds[listener] = !restricted && simple[listener] && !hasInput[listener] ? plain : route(listener)
        }
        for i in 0..<capacity { hasInput[i] = false }
    }

    /// What to send `slot` this tick.
    public func output(for slot: MixerSlot) -> MixerOutput { valid(slot) ? kinds[slot.rawValue] : .silence }

    /// The samples for `slot` this tick: its own mix, the shared mix, or silence per `output(for:)`.
    public func frame(for slot: MixerSlot) -> AudioFrame {
        switch output(for: slot) {
        case .own: outputs[slot.rawValue]
        case .shared: shared
        case .silence: silence
        }
    }

    /// Own-mix buffer of `slot` (valid when `output(for:)` is `.own`).
    public func ownMix(for slot: MixerSlot) -> AudioFrame { outputs[slot.rawValue] }

    /// RFC 6464 level (−dBov) of the slot's last input; 127 when silent or absent.
    public func level(for slot: MixerSlot) -> UInt8 { valid(slot) ? levels[slot.rawValue] : 127 }

    public func isSpeaking(_ slot: MixerSlot) -> Bool { valid(slot) && present[slot.rawValue] && speaking[slot.rawValue].isSpeaking }

    /// How many inputs the last tick mixed (0: the shared mix is silence).
    public var mixedCount: Int { selected.count }

    /// Slots mixed in the last tick, loudest first.
    public var mixedSlots: [MixerSlot] { (0..<selected.count).map { MixerSlot(selected[$0]) } }

    // MARK: internals

    private func valid(_ slot: MixerSlot) -> Bool { slot.rawValue >= 0 && slot.rawValue < capacity }

    private func measureAndSelect() {
        selected.removeAll()
        inputs.withUnsafeBufferPointer { input in
            for s in 0..<capacity {
                guard present[s] else { continue }
                var e: Int64 = 0
                if hasInput[s] {
                    let base = s * n
                    for i in 0..<n { let x = Int64(input[base + i]); e += x * x }
                }
                energy[s] = e
                levels[s] = hasInput[s] ? AudioLevel.level(sumOfSquares: e, count: n) : undecodedLevels[s]
                undecodedLevels[s] = 127
                _ = speaking[s].update(level: levels[s])
                guard hasInput[s], !flags[s].muted, gains[s] > 0, levels[s] <= activityLevel else { continue }
                if let only = flags[s].canSpeak, only.isEmpty { continue }
                selected.offer(s) { energy[$0] > energy[$1] }
            }
        }
    }

    private func hears(_ listener: Int, _ speaker: Int) -> Bool {
        if speaker == listener { return false }
        if let only = flags[listener].canHear, !only.contains(MixerSlot(speaker)) { return false }
        if let only = flags[speaker].canSpeak, !only.contains(MixerSlot(listener)) { return false }
        return true
    }

    private func route(_ listener: Int) -> MixerOutput {
        if flags[listener].earmuffed { return .silence }
        var audible = 0, restricted = false, isSelected = false
        for k in 0..<selected.count {
            let s = selected[k]
            if s == listener { isSelected = true; continue }
            if hears(listener, s) { audible += 1 } else { restricted = true }
        }
        if audible == 0 { return .silence }
        if !isSelected && !restricted { return .shared }
        // Mix-minus-self or a restricted mix: sum only what this listener may hear.
        let base0 = listener
        accumulator.withUnsafeMutableBufferPointer { acc in
            for i in 0..<n { acc[i] = 0 }
            inputs.withUnsafeBufferPointer { input in
                for k in 0..<selected.count {
                    let s = selected[k]
                    guard hears(base0, s) else { continue }
                    let g = gains[s], base = s * n
                    for i in 0..<n { acc[i] &+= (Int32(input[base + i]) * g) >> 12 }
                }
            }
            outputs[listener].withMutableSamples { out in
                for i in 0..<n { out[i] = SoftLimiter.limit(acc[i]) }
            }
        }
        return .own
    }
}
