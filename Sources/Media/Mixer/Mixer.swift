import Audio
import Wire

/// An audio mixer attached to a router (FreeSWITCH's conference, Janus' AudioBridge), ticked by
/// its worker every 20 ms together with every other mixer of that worker. The worker places its tick
/// just after the packets of the loudest speaker of its biggest mixer arrive (`pacer`, `TickPhase`),
/// so that speaker's listeners do not wait for a tick.
///
/// Per tick: each input yields 20 ms (jitter buffer + decode or concealment, or queued frames),
/// `MixerCore` mixes the loudest `maxSpeakers` through the soft limiter, and every consumer of the
/// mixer's output producer gets one packet: mixed speakers and restricted listeners their own mix
/// (encoded once per participant), everyone else the shared mix, encoded once per tick and then only
/// rewritten and SRTP-protected per listener by `Consumer.forward`. The output is an ordinary
/// producer, so listeners subscribe to it with the usual offer/answer flow and get one m-line.
///
/// Sequence numbers advance once per tick that sends; timestamps advance every tick, so a room that
/// falls silent (no input has audio) sends nothing and looks like DTX to the receivers. An idle
/// mixer costs one loop over its inputs per tick.
///
/// The rate: a mixer whose every participant is a port at 8 kHz (G.711 phones bridged or in a phone
/// conference) and whose mix nobody else takes (no WebRTC listener, no tap) mixes at 8 kHz, so no line
/// resamples and a tick's arithmetic is a sixth of the work; anything else makes it mix at 48 kHz. The
/// rate is settled on the control path as members come and go (a WebRTC input, a player or a tap widens
/// the mixer before it is made, so it is made at 48 kHz), and a tick widens it when a port's far end
/// changed codec (a re-INVITE to Opus). Each rate's `MixerCore` is made once and kept.
final class Mixer {
    static let packetCapacity = 1500
    /// RTP header plus a one-byte-header extension block carrying the RFC 6464 level.
    static let headerLength = 20
    static let samplesPerTick: UInt32 = 960
    /// Beyond the speakers it mixes, how many more of the loudest inputs (by their senders' levels) a big
    /// mixer decodes each tick: the decoded energy picks the mixed ones among them.
    static let spareCandidates = 2
    /// An input once among the loudest stays decoded this long (300 ms): a speaker's packets that arrive
    /// in bursts, and its buffered audio after its level drops, are still heard, and its decoder keeps state.
    static let decodeHoldTicks = 15

    let id: MixerID
    unowned(unsafe) let router: Router
    /// The mix as a track: consumers of it are the listeners.
    let output: Producer
    /// The output producer's transport: local, never connected, never in the worker's tables.
    private let anchor: WebRTCTransport
    /// The core mixing at `rate`, and every core made so far (48 kHz from the start, 8 kHz once narrowed).
    private(set) var core: MixerCore
    private(set) var rate: SampleRate
    private var cores: [MixerCore]

    private(set) var participants: [MixerParticipantID: MixerParticipant] = [:]
    /// Participants with an input, in join order (the tick walks this).
    private var inputs: [MixerParticipant] = []
    /// How many of `inputs` are ranked (WebRTC producers'), and the tick's loudest of them (indices into `inputs`).
    private var rankedInputs = 0
    private var loudest: LoudestList
    /// Participants whose audio leaves through a `MixerPort` (phone legs): each gets what it hears every tick.
    private var ports: [MixerParticipant] = []
    private var bySlot: [MixerParticipant?]
    /// The output's consumers split for the send loop, rebuilt when the output's consumers or the
    /// participants change: `plain` get the shared mix (or silence) as a whole whenever
    /// `MixerCore.sharedIsUniversal`, walked with prefetch like a forwarding fan-out; `others`
    /// (mixed speakers, restricted or earmuffed listeners) are routed one by one.
    private var plain: [Consumer] = []
    private var others: [Consumer] = []
    private var listsVersion: UInt64 = .max
    private var listsDirty = true
    private var scratch: AudioFrame
    private let sharedEncoder: OpusEncoder
    /// The loss the shared mix's encoder plans for: what a tenth of its listeners report (see `planLoss`).
    private var sharedLossPlan = LossPlan()
    /// Listeners of the shared mix by reported fraction lost (256ths), counted in `planLoss`; reused.
    private var lossCounts = [Int](repeating: 0, count: 256)
    let sharedPacket: UnsafeMutableRawPointer
    private(set) var sharedLength = 0
    private let silencePacket: UnsafeMutableRawPointer
    private var silenceLength = 0
    private var sequence: UInt16
    private var timestamp: UInt32
    private var tickNumber: UInt64 = 0
    private var wasMixing = false
    private var stats = MixerStats()
    /// The speaker the worker's tick follows (`TickPhase`), among WebRTC inputs: the loudest speaking
    /// (by the decoded signal) when the one it followed stopped speaking, or when another has been
    /// clearly louder for a few ticks (`pacerSwitchDecibels`, `pacerSwitchTicks`); kept otherwise.
    private(set) var pacer: RTPMixerInput?
    /// A speaker louder than the followed one by `pacerSwitchDecibels`, and for how many ticks in a row.
    private var challenger: RTPMixerInput?
    private var challengerTicks = 0
    /// A voice this much louder than the followed one (dB) for this many ticks takes the tick: a talker over
    /// background noise, not two people talking over each other at about the same level.
    static let pacerSwitchDecibels = 10
    static let pacerSwitchTicks = 3
    /// Recorders' copies of the mix (usually none).
    private(set) var taps: [MixerTap] = []

    init(id: MixerID, router: Router, worker: WorkerCore, capacity: Int, maxSpeakers: Int,
         outputID: ProducerID, ssrc: UInt32, initialSequence: UInt16, initialTimestamp: UInt32) throws(MediaError) {
        self.id = id
        self.router = router
        rate = .hz48000
        anchor = WebRTCTransport(id: TransportID(rawValue: "mix-" + id.rawValue), router: router, worker: worker,
                                 ice: ICEParameters.random(iceLite: true), rtcpSSRC: ssrc ^ 0x5A5A_5A5A | 1, cname: "sb-mix")
        output = Producer(id: outputID, parameters: ProducerParameters(kind: .audio, mid: "mix", codec: .opus, ssrc: ssrc,
                                                                      extensions: RTPExtensionIDs(audioLevel: 1),
                                                                      streamID: "mix-" + id.rawValue, trackID: outputID.rawValue),
                          codec: .opus, transport: anchor, router: router)
        core = MixerCore(capacity: capacity, rate: rate, maxSpeakers: maxSpeakers)
        cores = [core]
        bySlot = [MixerParticipant?](repeating: nil, count: core.capacity)
        loudest = LoudestList(capacity: core.maxSpeakers + Mixer.spareCandidates)
        scratch = AudioFrame(rate: rate)
        scratch.clear()
        do {
            sharedEncoder = try OpusEncoder(Mixer.encoderConfiguration(rate: .hz48000))
        } catch { throw .invalid("opus encoder: \(error)") }
        sharedPacket = .allocate(byteCount: Mixer.packetCapacity, alignment: 16)
        silencePacket = .allocate(byteCount: Mixer.packetCapacity, alignment: 16)
        sequence = initialSequence
        timestamp = initialTimestamp
        Mixer.writeHeader(sharedPacket)
        Mixer.writeHeader(silencePacket)
        // Digital silence, encoded once by an encoder of its own (no state shared with the mix).
        if let silent = try? OpusEncoder() {
            let frame = AudioFrame(rate: rate)
            let room = UnsafeMutableRawBufferPointer(start: silencePacket + Mixer.headerLength,
                                                     count: Mixer.packetCapacity - Mixer.headerLength)
            silenceLength = Mixer.headerLength + ((try? silent.encode(frame, into: room)) ?? 0)
            Mixer.setLevel(silencePacket, 127)
        }
    }

    deinit {
        sharedPacket.deallocate()
        silencePacket.deallocate()
    }

    /// `V=2, X=1`, the canonical Opus payload type, and a one-byte-header extension block with
    /// the RFC 6464 audio level at the consumer-side id; sequence, timestamp and SSRC are the
    /// consumer's and get written as each copy goes out.
    static func writeHeader(_ p: UnsafeMutableRawPointer) {
        p.initializeMemory(as: UInt8.self, repeating: 0, count: headerLength)
        Bytes.setByte(p, 0, 0x90)
        Bytes.setByte(p, 1, RTPCodec.opus.payloadType)
        Bytes.put16(p, 12, 0xBEDE)
        Bytes.put16(p, 14, 1)
        Bytes.setByte(p, 16, (RTPExtensionIDs.consumerSide.audioLevel ?? 1) << 4)
        Bytes.setByte(p, 17, 127)
    }

    @inline(__always)
    static func setLevel(_ p: UnsafeMutableRawPointer, _ level: UInt8) { Bytes.setByte(p, 17, level & 0x7F) }

    // MARK: Membership (control path, on the worker thread)

    func add(_ id: MixerParticipantID, input: (any MixerInput)?, producer: Producer?, options: MixerParticipantOptions) throws(MediaError) {
        if let existing = participants[id] {
            // Re-adding replaces the input and options.
            remove(existing.id)
        }
        guard let free = bySlot.firstIndex(where: { $0 == nil }) else { throw .invalid("mixer \(self.id) is full (\(core.capacity))") }
        let participant = MixerParticipant(id: id, slot: MixerSlot(free), options: options, rate: rate)
        participant.input = input
        participant.ranked = input as? RTPMixerInput
        participant.producer = producer
        participant.port = (input as? PortMixerInput)?.port
        if participant.needsEncoder, !participant.makeEncoder() { throw .invalid("opus encoder") }
        participants[id] = participant
        bySlot[free] = participant
        if input != nil { inputs.append(participant) }
        if participant.ranked != nil { rankedInputs += 1 }
        if participant.port != nil { ports.append(participant) }
        producer?.mixerInput = input as? RTPMixerInput
        core.join(participant.slot)
        applyOptions()
        for consumer in output.consumers where consumer.mixerParticipant == id { consumer.mixerSlot = free }
        listsDirty = true
        settleRate()
    }

    func remove(_ id: MixerParticipantID) {
        guard let participant = participants.removeValue(forKey: id) else { return }
        participant.producer?.mixerInput = nil
        core.leave(participant.slot)
        bySlot[participant.slot.rawValue] = nil
        inputs.removeAll { $0 === participant }
        if let ranked = participant.ranked {
            rankedInputs -= 1
            if ranked === pacer { pacer = nil }
            if ranked === challenger { challenger = nil }
        }
        if let port = participant.port {
            ports.removeAll { $0 === participant }
            participant.port = nil
            port.close()
        }
        for tap in taps {
            if tap.slot == participant.slot.rawValue { tap.slot = -2 }
            tap.release(slot: participant.slot.rawValue)
        }
        for consumer in output.consumers where consumer.mixerSlot == participant.slot.rawValue { consumer.mixerSlot = -1 }
        applyOptions()
        listsDirty = true
        settleRate()
    }

    /// A producer closed: whoever it fed leaves.
    func removeInputs(of producer: Producer) {
        for participant in inputs where participant.producer === producer { remove(participant.id) }
    }

    func setOptions(_ id: MixerParticipantID, _ options: MixerParticipantOptions) throws(MediaError) {
        guard let participant = participants[id] else { throw .notFound("participant \(id) in mixer \(self.id)") }
        participant.options = options
        if participant.needsEncoder { participant.makeEncoder() }
        applyOptions()
        listsDirty = true
    }

    /// Sends the mix on `consumer` as `participant` hears it (its mix-minus, its earmuff).
    func bind(_ consumer: Consumer, to participant: MixerParticipantID) {
        consumer.mixerParticipant = participant
        consumer.mixerSlot = participants[participant]?.slot.rawValue ?? -1
        listsDirty = true
    }

    /// Flags in slots: ids in canHear/canSpeak resolve to slots of current participants.
    private func applyOptions() {
        // A speaker heard only by some gives everyone else a mix of their own.
        let anyCanSpeak = participants.values.contains { $0.options.canSpeak != nil }
        for participant in participants.values {
            if anyCanSpeak { participant.makeEncoder() }
            let o = participant.options
            core.setFlags(MixerFlags(
                muted: o.muted, earmuffed: o.earmuffed, volume: o.volume,
                canHear: o.canHear.map { $0.compactMap { participants[$0]?.slot } },
                canSpeak: o.canSpeak.map { $0.compactMap { participants[$0]?.slot } }), for: participant.slot)
        }
    }

    func participant(_ id: MixerParticipantID) -> MixerParticipant? { participants[id] }

    // MARK: Rate (control path; a tick only widens)

    /// Every participant is a port whose far end is at 8 kHz, and nobody else takes the mix.
    private var narrowbandOnly: Bool {
        !participants.isEmpty && ports.count == participants.count && taps.isEmpty && output.consumers.isEmpty && portsNarrowband
    }

    private var portsNarrowband: Bool { ports.allSatisfy { $0.port?.rate == .hz8000 } }

    /// Mixes at 8 kHz when only 8 kHz ports take part, else at 48 kHz (see the type's notes).
    func settleRate() { retune(narrowbandOnly ? .hz8000 : .hz48000) }

    /// Mixes at 48 kHz from now: called before something that needs the mix at 48 kHz is made (a WebRTC
    /// input or listener, a player, a tap).
    func widen() { retune(.hz48000) }

    /// Mixes at `new` from the next tick: that rate's core, made once and kept, brought up to the current
    /// members and their options.
    private func retune(_ new: SampleRate) {
        guard new != rate else { return }
        let next: MixerCore
        if let made = cores.first(where: { $0.rate == new }) {
            next = made
        } else {
            next = MixerCore(capacity: core.capacity, rate: new, maxSpeakers: core.maxSpeakers)
            next.activityLevel = core.activityLevel
            cores.append(next)
        }
        for slot in 0..<next.capacity {
            if bySlot[slot] != nil { next.join(MixerSlot(slot)) } else { next.leave(MixerSlot(slot)) }
        }
        core = next
        rate = new
        scratch = AudioFrame(rate: new)
        scratch.clear()
        for participant in participants.values { participant.retune(new) }
        applyOptions()
        stats.rateChanges &+= 1
    }

    /// Starts copying the shared mix (no participant) or what `participant` hears into a ring of
    /// `capacity` frames.
    func addTap(_ id: MixerTapID, participant: MixerParticipantID?, split: Bool, speakerChannels: Int = 0, capacity: Int) throws(MediaError) {
        guard !taps.contains(where: { $0.id == id }) else { throw .invalid("tap \(id) exists on mixer \(self.id)") }
        // A recording takes the mix at 48 kHz.
        widen()
        defer { settleRate() }
        var slot = -1
        if let participant {
            guard let p = participants[participant] else { throw .notFound("participant \(participant) in mixer \(self.id)") }
            slot = p.slot.rawValue
        } else if split {
            throw .invalid("a split tap needs a participant")
        }
        taps.append(MixerTap(id: id, participant: participant, slot: slot, split: split, speakerChannels: speakerChannels,
                             slots: core.capacity, capacity: capacity, rate: rate))
    }

    func tap(_ id: MixerTapID) -> MixerTap? { taps.first { $0.id == id } }

    func removeTap(_ id: MixerTapID) {
        taps.removeAll { $0.id == id }
        settleRate()
    }

    /// Participants whose input reached its end since the last call (players that finished).
    func finishedParticipants() -> [MixerParticipantID] {
        var out: [MixerParticipantID] = []
        for participant in inputs where participant.input?.finished == true { out.append(participant.id) }
        return out
    }

    /// Speaking changes since the last call, from the decoded signal.
    func speakingChanges() -> [(MixerParticipantID, Bool)] {
        var out: [(MixerParticipantID, Bool)] = []
        for participant in inputs {
            let now = core.isSpeaking(participant.slot)
            if now != participant.speaking {
                participant.speaking = now
                out.append((participant.id, now))
            }
        }
        return out
    }

    // MARK: Tick (no allocation, lock or log)

    /// One 20 ms tick: decode the inputs (in a big mixer only the loudest by their senders' levels), mix,
    /// and send each consumer of the output its packet.
    func tick(now: UInt64, queue: SendQueue) {
        tickNumber &+= 1
        // A port's far end changed codec (a re-INVITE from G.711 to Opus): mix at 48 kHz from this tick.
        if rate == .hz8000, !portsNarrowband { widen() }
        var fed = 0
        let ranking = rankedInputs > loudest.capacity
        if ranking { holdLoudest() }
        inputs.withUnsafeBufferPointer { list in
            for participant in list {
                guard let input = participant.input else { continue }
                if ranking, let ranked = participant.ranked {
                    if participant.decodeHold == 0 {
                        // Not among the loudest lately: its frame is consumed, its level counted, nothing decoded.
                        ranked.skip(now: now)
                        core.setLevel(participant.slot, participant.tickLevel)
                        stats.framesSkipped &+= 1
                        continue
                    }
                    participant.decodeHold -= 1
                }
                if input.pull(into: &scratch, now: now) {
                    core.setInput(participant.slot, scratch)
                    fed += 1
                    if !taps.isEmpty { noteTappedInput(participant.slot.rawValue) }
                }
            }
        }
        guard fed > 0 || wasMixing else {
            // Nobody has audio: nothing to mix or send; the timeline still moves (DTX to receivers).
            timestamp &+= Mixer.samplesPerTick
            stats.ticksIdle &+= 1
            for tap in taps { tap.capture(nil) }
            for participant in ports { participant.port?.deliver(nil, now: now) }
            return
        }
        wasMixing = fed > 0
        stats.ticksMixed &+= 1
        core.mix()
        var candidate: RTPMixerInput?
        var candidateLevel: UInt8 = .max
        var pacerLevel: UInt8?
        for participant in inputs {
            let level = core.level(for: participant.slot)
            if let producer = participant.producer { producer.noteLoudness(127 - Int(level)) }
            guard let ranked = participant.ranked, core.isSpeaking(participant.slot) else { continue }
            if ranked === pacer { pacerLevel = level }
            if level < candidateLevel {
                candidate = ranked
                candidateLevel = level
            }
        }
        followLoudest(candidate, level: candidateLevel, pacerLevel: pacerLevel)
        let anyMixed = core.mixedCount > 0
        if !taps.isEmpty { captureTaps(anyMixed: anyMixed) }
        for participant in ports {
            let heard: AudioFrame? = switch core.output(for: participant.slot) {
            case .own: core.ownMix(for: participant.slot)
            case .shared: anyMixed ? core.shared : nil
            case .silence: nil
            }
            participant.port?.deliver(heard, now: now)
        }
        if listsDirty || listsVersion != output.consumersVersion { sortConsumers() }
        if tickNumber % Mixer.ticksPerLossPlan == 0 { planLoss() }
        var sharedReady = false
        if core.sharedIsUniversal {
            // Plain listeners: one encode, then per listener only the header rewrite, SRTP and the
            // queue (sent with sendmmsg by the worker), prefetching a few listeners ahead.
            if anyMixed {
                // No plain listener (a room of phone legs): the shared mix is encoded only if a routed consumer needs it.
                guard !plain.isEmpty else { return finishRouted(anyMixed: anyMixed, sharedReady: &sharedReady, now: now, queue: queue) }
                encodeShared()
                sharedReady = true
                sendAll(plain, sharedPacket, sharedLength, now: now, queue: queue)
            } else {
                sendAll(plain, silencePacket, silenceLength, now: now, queue: queue)
            }
        } else {
            route(plain, anyMixed: anyMixed, sharedReady: &sharedReady, now: now, queue: queue)
        }
        finishRouted(anyMixed: anyMixed, sharedReady: &sharedReady, now: now, queue: queue)
    }

    /// Ranks the inputs that carry their senders' levels and holds the loudest `loudest.capacity` for
    /// decoding (ties go to the earlier joined, so a room of equal levels keeps decoding the same ones).
    /// Inputs whose sender stamps no level are always decoded.
    private func holdLoudest() {
        loudest.removeAll()
        inputs.withUnsafeBufferPointer { list in
            for (index, participant) in list.enumerated() {
                guard let ranked = participant.ranked else { continue }
                participant.tickLevel = ranked.takeArrivedLevel()
                guard ranked.carriesLevels else {
                    participant.decodeHold = Mixer.decodeHoldTicks
                    continue
                }
                // RFC 6464 levels are -dBov: lower is louder.
                loudest.offer(index) { list[$0].tickLevel < list[$1].tickLevel }
            }
            for k in 0..<loudest.count { list[loudest[k]].decodeHold = Mixer.decodeHoldTicks }
        }
    }

    /// The routed consumers' packets, then the timeline moves on.
    private func finishRouted(anyMixed: Bool, sharedReady: inout Bool, now: UInt64, queue: SendQueue) {
        route(others, anyMixed: anyMixed, sharedReady: &sharedReady, now: now, queue: queue)
        sequence &+= 1
        timestamp &+= Mixer.samplesPerTick
    }

    /// Every consumer of `list` gets the same packet.
    private func sendAll(_ list: [Consumer], _ packet: UnsafeMutableRawPointer, _ length: Int, now: UInt64, queue: SendQueue) {
        guard length > Mixer.headerLength else { return }
        let (sequence, timestamp) = (self.sequence, self.timestamp)
        list.withUnsafeBufferPointer { list in
            stats.packetsSent &+= UInt64(list.count)
            Prefetch.forEach(list) {
                $0.forward(packet, length: length, sequence: sequence, timestamp: timestamp, keyframe: false, now: now, queue: queue)
            }
        }
    }

    /// Each consumer of `list` gets what its participant hears.
    private func route(_ list: [Consumer], anyMixed: Bool, sharedReady: inout Bool, now: UInt64, queue: SendQueue) {
        list.withUnsafeBufferPointer { list in
            Prefetch.forEach(list) { consumer in
                let slot = consumer.mixerSlot
                let kind: MixerOutput = slot >= 0 ? core.output(for: MixerSlot(slot)) : (anyMixed ? .shared : .silence)
                switch kind {
                case .shared:
                    if !sharedReady {
                        encodeShared()
                        sharedReady = true
                    }
                    send(consumer, sharedPacket, sharedLength, now: now, queue: queue)
                case .own:
                    guard let participant = bySlot[slot] else { return }
                    if participant.encodedTick != tickNumber { encodeOwn(participant) }
                    guard let packet = participant.packet else { return }
                    send(consumer, packet, participant.packetLength, now: now, queue: queue)
                case .silence:
                    send(consumer, silencePacket, silenceLength, now: now, queue: queue)
                }
            }
        }
    }

    /// The tick keeps following a speaker while it speaks (people talking over each other at about the same
    /// level do not pull it back and forth), then the loudest one speaking; a speaker that stays clearly
    /// louder than the followed one takes it sooner. `pacerLevel` is the followed speaker's level this tick
    /// (nil: it is not speaking).
    private func followLoudest(_ candidate: RTPMixerInput?, level: UInt8, pacerLevel: UInt8?) {
        guard let pacerLevel else {
            if let candidate { pacer = candidate }
            challenger = nil
            return
        }
        guard let candidate, candidate !== pacer, Int(pacerLevel) - Int(level) >= Mixer.pacerSwitchDecibels else {
            challenger = nil
            return
        }
        challengerTicks = candidate === challenger ? challengerTicks + 1 : 1
        challenger = candidate
        if challengerTicks >= Mixer.pacerSwitchTicks {
            pacer = candidate
            challenger = nil
        }
    }

    /// Splits the output's consumers into `plain` and `others` (keeping the arrays' storage, so a
    /// steady room allocates nothing here).
    private func sortConsumers() {
        plain.removeAll(keepingCapacity: true)
        others.removeAll(keepingCapacity: true)
        for consumer in output.consumers {
            let slot = consumer.mixerSlot
            if slot < 0 || bySlot[slot]?.isPlainListener ?? true { plain.append(consumer) } else { others.append(consumer) }
        }
        listsVersion = output.consumersVersion
        listsDirty = false
    }

    private func noteTappedInput(_ slot: Int) {
        for tap in taps where tap.slot == slot || tap.perSpeaker { tap.noteInput(scratch, slot: slot) }
    }

    private func captureTaps(anyMixed: Bool) {
        for tap in taps {
            if tap.slot == -1 {
                tap.capture(anyMixed ? core.shared : nil)
            } else if tap.slot >= 0, core.output(for: MixerSlot(tap.slot)) != .silence {
                tap.capture(core.frame(for: MixerSlot(tap.slot)))
            } else {
                tap.capture(nil)
            }
        }
    }

    @inline(__always)
    private func send(_ consumer: Consumer, _ packet: UnsafeMutableRawPointer, _ length: Int, now: UInt64, queue: SendQueue) {
        guard length > Mixer.headerLength else { return }
        stats.packetsSent &+= 1
        consumer.forward(packet, length: length, sequence: sequence, timestamp: timestamp, keyframe: false, now: now, queue: queue)
    }

    /// Ticks between two `planLoss` (a second): receivers report every one to five seconds.
    static let ticksPerLossPlan: UInt64 = 50

    /// A mixer's Opus encoder at `rate`, planning for `loss` percent (a new one for none, until its listeners
    /// report some: `planLoss`).
    static func encoderConfiguration(rate: SampleRate, loss: Int32 = LossPlan().percent) -> OpusCodec.Configuration {
        var configuration = OpusCodec.Configuration()
        configuration.sampleRate = rate
        configuration.expectedLossPercent = loss
        return configuration
    }

    /// Once a second: each Opus encoder plans for the loss its listeners report. The shared mix follows the
    /// listener at the 90th percentile of reported loss, so its FEC comes in when a tenth of the room loses
    /// packets and not for one bad link, whose concealment covers it; an own mix follows its one listener.
    private func planLoss() {
        let total = plain.count
        for consumer in plain { lossCounts[Int(consumer.reportedFractionLost)] += 1 }
        if total > 0 {
            var rank = total - total / 10
            var fraction = 0
            while fraction < 255 {
                rank -= lossCounts[fraction]
                if rank <= 0 { break }
                fraction += 1
            }
            for i in lossCounts.indices { lossCounts[i] = 0 }
            if sharedLossPlan.update(fractionLost: UInt8(fraction)) {
                sharedEncoder.setExpectedLoss(percent: sharedLossPlan.percent)
            }
        }
        // The other consumers are bound to a participant with a mix of its own.
        for consumer in others {
            guard consumer.mixerSlot >= 0, let participant = bySlot[consumer.mixerSlot], let encoder = participant.encoder,
                  participant.lossPlan.update(fractionLost: consumer.reportedFractionLost) else { continue }
            encoder.setExpectedLoss(percent: participant.lossPlan.percent)
        }
    }

    private func encodeShared() {
        let room = UnsafeMutableRawBufferPointer(start: sharedPacket + Mixer.headerLength, count: Mixer.packetCapacity - Mixer.headerLength)
        let n = (try? sharedEncoder.encode(core.shared, into: room)) ?? 0
        sharedLength = n > 0 ? Mixer.headerLength + n : 0
        Mixer.setLevel(sharedPacket, Audio.AudioLevel.level(core.shared))
        stats.sharedEncodes &+= 1
    }

    private func encodeOwn(_ participant: MixerParticipant) {
        participant.encodedTick = tickNumber
        if participant.encoder == nil {
            // Not foreseen on the control path (see `MixerParticipant.needsEncoder`): made here, once.
            stats.encodersMadeOnTick &+= 1
            participant.makeEncoder()
        }
        guard let encoder = participant.encoder, let packet = participant.packet else {
            participant.packetLength = 0
            return
        }
        let room = UnsafeMutableRawBufferPointer(start: packet + Mixer.headerLength,
                                                 count: Mixer.packetCapacity - Mixer.headerLength)
        let mix = core.ownMix(for: participant.slot)
        let n = (try? encoder.encode(mix, into: room)) ?? 0
        participant.packetLength = n > 0 ? Mixer.headerLength + n : 0
        Mixer.setLevel(packet, Audio.AudioLevel.level(mix))
        stats.ownEncodes &+= 1
    }

    // MARK: Stats

    func currentStats() -> MixerStats {
        var s = stats
        s.participants = participants.count
        s.inputs = inputs.count
        s.outputs = output.consumers.count
        s.encoders = participants.values.filter { $0.encoder != nil }.count
        s.sampleRate = rate.rawValue
        s.sharedExpectedLossPercent = sharedEncoder.expectedLossPercent
        s.speaking = inputs.filter { core.isSpeaking($0.slot) }.map(\.id).sorted { $0.rawValue < $1.rawValue }
        return s
    }
}
