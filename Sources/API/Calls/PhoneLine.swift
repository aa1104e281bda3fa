import Audio
import Live
import Media
import Runtime
import Telephony
import Wire

/// A phone leg's RTP as a mixer participant: what the phone says is decoded by the leg and queued at the
/// codec's rate for the next ticks (`LineQueue`), and the frame a tick takes goes to the mixer at the
/// mixer's rate; what its participant hears each tick is sent at the codec's rate, so the mixer's tick
/// paces the phone's stream (silence included, as phones expect a steady 20 ms stream). Frames are
/// resampled only when the mixer's rate is not the codec's (`LineResampling`): a conversation of G.711
/// phones mixes at 8 kHz.
///
/// Lives on the mixer's worker loop: made there by the factory, every method runs there, which is what
/// makes the unchecked Sendable sound (it only lets the line be handed to its loop). Everything the
/// packet path needs is allocated when the session is configured.
final class PhoneLine: MixerPort, SpeechListeningLine, @unchecked Sendable {
    let leg: RTPLeg
    unowned let loop: EventLoop
    /// DTMF the phone sent (RFC 4733), reported once per key press, on the loop.
    var onDigit: ((Character) -> Void)? {
        get { leg.onDigit }
        set { leg.onDigit = newValue }
    }

    private var resampling: LineResampling?
    private var said = AudioFrame(rate: .hz8000)
    private var queued = AudioFrame(rate: .hz8000)
    private var outgoing = AudioFrame(rate: .hz8000)
    private var silence = AudioFrame(rate: .hz8000)
    private var queue = LineQueue(rate: .hz8000)
    private var handedOver = false
    private var closed = false
    /// Runs once when the line leaves its mix (a video session's SIP call hangs up then).
    var onClose: (() -> Void)?
    /// Armed by `watchSilence` once the call is answered.
    private var onSilentPeer: (() -> Void)?
    private var silenceLimit: UInt64 = 0
    private var lastHeard = (packets: -1, at: UInt64(0))

    /// Answering-machine detection on what the phone says (`listenForMachine`): moves with the leg to the
    /// next line when an NCCO `conversation` moves the call.
    struct MachineListening {
        var machine = AnsweringMachineDetector()
        var beep: BeepDetector?
        /// Nanoseconds to wait for a beep once a machine is found.
        let beepTimeout: UInt64
        /// When the current wait (the verdict, then the beep) gives up; set by the first tick of each, so a
        /// far end that sends no audio at all still gets a verdict.
        var deadline: UInt64 = 0
        let report: @Sendable (MachineDetectionResult) -> Void
    }
    var listening: MachineListening?
    /// Speech input (`listenForSpeech`) on what the mixer takes from the line.
    private var speech = LineSpeech()
    /// How long a verdict may take when the phone's audio does not decide it (silence counts, no packets don't).
    static let verdictLimit: UInt64 = 6_000_000_000

    /// Binds the leg's ports; `negotiated` when the session is already known (an inbound offer).
    convenience init(loop: EventLoop, pool: RTPPortPool, host: String, negotiated: NegotiatedAudio?) throws {
        try self.init(loop: loop, leg: try RTPLeg(loop: loop, pool: pool, host: host), negotiated: negotiated, handedOver: false)
    }

    /// Takes over `leg`, on `loop`: a leg moved from another line with `handOver()` (detached, so it is
    /// attached here even when the new mixer runs on the same loop as the old one), or a fresh leg.
    init(loop: EventLoop, leg: RTPLeg, negotiated: NegotiatedAudio?, handedOver moved: Bool = true) throws {
        self.loop = loop
        self.leg = leg
        PhoneLineCounters.lines.add(1, ordering: .relaxed)
        if moved || leg.loop !== loop { leg.attach(to: loop) }
        leg.onAudio = { [unowned self] samples in self.heardFromPhone(samples) }
        do {
            if let negotiated { try configure(negotiated) } else if leg.configured { try prepare() }
        } catch {
            PhoneLineCounters.lines.subtract(1, ordering: .relaxed)
            leg.close()
            throw error
        }
    }

    /// Lets the leg go to another line (another conversation's mixer): this line stops using it and
    /// `close` no longer closes it. Call on the loop; the leg's sockets stay open.
    func handOver() -> RTPLeg {
        handedOver = true
        leg.onAudio = nil
        leg.onDigit = nil
        leg.onDTLSFailure = nil
        leg.detach()
        return leg
    }

    /// The session (from the answer, or a re-INVITE's codec change): codec, peer, resamplers.
    func configure(_ negotiated: NegotiatedAudio) throws {
        try leg.configure(negotiated)
        try prepare()
    }

    /// The peer's re-offer on the established call (hold, resume, a new address, new keys, another codec): the
    /// leg follows it, keyed as before unless the re-offer changed the peer's keys. Call on the leg's loop.
    func reoffered(_ sdp: SessionDescription) {
        guard let n = try? PlainRTPNegotiator.renegotiated(leg.negotiated, reoffer: sdp) else { return }
        if n.codec == leg.negotiated.codec { leg.update(n) } else { try? configure(n) }
    }

    /// The far end's rate: the leg's codec's (G.711's 8 kHz until the session is known). A tick reads it.
    var rate: SampleRate { said.rate }

    /// Resamplers and frames for the leg's codec rate.
    private func prepare() throws {
        let rate = SampleRate(rawValue: leg.sampleRate) ?? .hz8000
        resampling = try LineResampling(rate: rate)
        said = AudioFrame(rate: rate)
        queued = AudioFrame(rate: rate)
        outgoing = AudioFrame(rate: rate)
        silence = AudioFrame(rate: rate)
        if queue.samples == rate.samplesPerFrame { queue.reset() } else { queue = LineQueue(rate: rate) }
    }

    // MARK: Packet path (no allocation, lock or log)

    private func heardFromPhone(_ samples: UnsafeBufferPointer<Int16>) {
        guard samples.count == said.count else { return }
        if listening != nil { listen(samples) }
        PhoneLineCounters.received.add(1, ordering: .relaxed)
        said.copy(from: samples)
        let dropped = queue.dropped, unmixed = queue.unmixed, underruns = queue.underruns
        queue.push(said)
        // The phone sends faster than we tick (clock drift, a burst): the queue dropped its oldest frame.
        if queue.dropped != dropped { PhoneLineCounters.framesDropped.add(1, ordering: .relaxed) }
        if queue.unmixed != unmixed { PhoneLineCounters.framesUnmixed.add(1, ordering: .relaxed) }
        // This frame came after the queue had run dry: late.
        if queue.underruns != underruns { PhoneLineCounters.underruns.add(1, ordering: .relaxed) }
    }

    func pull(into frame: inout AudioFrame, now: UInt64) -> Bool {
        guard let resampling else { return false }
        let trimmed = queue.trimmed, unmixed = queue.unmixed
        let pulled = queue.pull(into: &queued)
        if queue.trimmed != trimmed { PhoneLineCounters.framesTrimmed.add(queue.trimmed - trimmed, ordering: .relaxed) }
        if queue.unmixed != unmixed { PhoneLineCounters.framesUnmixed.add(queue.unmixed - unmixed, ordering: .relaxed) }
        if speech.active { speech.feed(pulled ? queued : silence) }
        guard pulled else { return false }
        guard resampling.toMixer(queued, into: &frame) else { return false }
        if frame.rate != rate { PhoneLineCounters.resampled.add(1, ordering: .relaxed) }
        return true
    }

    func deliver(_ heard: AudioFrame?, now: UInt64) {
        guard leg.configured, let resampling else { return }
        if silenceLimit > 0, onSilentPeer != nil { watchPeer(now: now) }
        if listening != nil { listeningDeadline(now: now) }
        let before = leg.statistics.packetsSent
        if let heard, resampling.fromMixer(heard, into: &outgoing) {
            if heard.rate != rate { PhoneLineCounters.resampled.add(1, ordering: .relaxed) }
            outgoing.withSamples { leg.send($0) }
        } else {
            silence.withSamples { leg.send($0) }
        }
        PhoneLineCounters.count(sent: leg.statistics.packetsSent > before)
    }

    /// From now on (the call is answered), `then` runs once when the far end has sent nothing, RTP or RTCP,
    /// for `limit` nanoseconds while the session says it sends (not while it holds us): the call's owner
    /// hangs up. 0: never. On the loop.
    func watchSilence(limit: UInt64, then: @escaping () -> Void) {
        guard limit > 0 else { return }
        silenceLimit = limit
        onSilentPeer = then
        lastHeard = (-1, 0)
    }

    /// From now on (the call is answered), listens for a person or a machine, then with `beep` for a
    /// voicemail's beep for up to `beepTimeout` seconds; `report` gets each finding. On the loop.
    func listenForMachine(beep: Bool, beepTimeout: Int, report: @escaping @Sendable (MachineDetectionResult) -> Void) {
        listening = MachineListening(beep: beep ? BeepDetector() : nil, beepTimeout: UInt64(beepTimeout) * 1_000_000_000, report: report)
    }

    private func listen(_ samples: UnsafeBufferPointer<Int16>) {
        guard var l = listening else { return }
        var finished = false
        if l.machine.verdict == nil {
            if let verdict = l.machine.feed(samples) {
                l.report(verdict == .human ? .human : .machine)
                finished = verdict == .human || l.beep == nil
                l.deadline = 0  // the wait for the beep starts at the next tick
            }
        } else if l.beep?.feed(samples, rate: leg.sampleRate) == true {
            l.report(.beep)
            finished = true
        }
        listening = finished ? nil : l
    }

    /// From now on, listens for one utterance with `settings`; `report` gets how listening ended and what was
    /// said. A new call replaces the listening in progress. On the loop.
    func listenForSpeech(_ settings: SpeechEndpointer.Settings, onStart: (() -> Void)? = nil,
                         report: @escaping (SpeechEndpointer.Ending, [Int16], Int) -> Void) {
        speech.listen(rate: rate, settings, onStart: onStart, report: report)
    }

    /// Ends the listening without a report. On the loop.
    func stopListeningForSpeech() { speech.stop() }

    private func listeningDeadline(now: UInt64) {
        guard var l = listening else { return }
        if l.deadline == 0 {
            l.deadline = now &+ (l.machine.verdict == nil ? Self.verdictLimit : l.beepTimeout)
            listening = l
        } else if now > l.deadline {
            l.report(l.machine.verdict == nil ? .human : .beepTimeout)
            listening = nil
        }
    }

    /// Each tick: when the peer last sent anything; past the limit, `onSilentPeer` once. A session where the
    /// peer does not send (it holds us, or media is inactive) starts the count again.
    private func watchPeer(now: UInt64) {
        let packets = leg.statistics.packetsReceived + leg.statistics.rtcpReceived
        guard leg.negotiated.receives, packets == lastHeard.packets else {
            lastHeard = (packets, now)
            return
        }
        if now &- lastHeard.at > silenceLimit, let silent = onSilentPeer {
            onSilentPeer = nil
            PhoneLineCounters.rtpTimeouts.add(1, ordering: .relaxed)
            silent()
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        onClose?()
        onClose = nil
        // Handlers that capture the call's leg, which holds this line: dropped, or the two keep each other alive.
        onSilentPeer = nil
        listening = nil
        speech.stop()
        PhoneLineCounters.lines.subtract(1, ordering: .relaxed)
        guard !handedOver else { return }
        PhoneLineCounters.arrived.add(leg.statistics.packetsReceived, ordering: .relaxed)
        PhoneLineCounters.lost.add(leg.statistics.packetsLost, ordering: .relaxed)
        PhoneLineCounters.malformed.add(leg.statistics.packetsDropped, ordering: .relaxed)
        PhoneLineCounters.srtpFailures.add(leg.statistics.srtpFailures, ordering: .relaxed)
        if leg.negotiated.srtp != nil { PhoneLineCounters.srtpLegs.add(1, ordering: .relaxed) }
        if leg.negotiated.dtls != nil { PhoneLineCounters.dtlsSRTPLegs.add(1, ordering: .relaxed) }
        PhoneLineCounters.dtlsFailures.add(leg.statistics.dtlsFailures, ordering: .relaxed)
        leg.close()
    }
}
