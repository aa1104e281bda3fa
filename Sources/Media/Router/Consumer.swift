import Wire

/// An outgoing copy of a producer on a subscribing transport (mediasoup's Consumer +
/// RtpStreamSend).
///
/// Holds only what differs per receiver: its SSRC, the sequence/timestamp mapping, pause
/// state and send counters. Retransmissions come from the producer's buffer through the
/// mapping, so a consumer costs a few hundred bytes, not a packet history.
final class Consumer {
    let id: ConsumerID
    let kind: MediaKind
    let codec: RTPCodec
    let ssrc: UInt32
    let cname: String
    let streamID: String
    let trackID: String
    /// The worker closes a transport's consumers before the transport, so this never dangles.
    /// Held unretained: the fan-out path borrows it once per packet (and prefetches through it
    /// for the consumers after this one) with no reference counting.
    let transportHandle: Unmanaged<WebRTCTransport>
    var transport: WebRTCTransport { transportHandle.takeUnretainedValue() }
    /// The track consumed (for simulcast, its layer listed last: the one the stream is known by).
    private(set) var producer: Producer
    /// The producer whose packets go out: `producer`, or for simulcast one of its layers. The consumer is
    /// in this producer's `consumers`, and in `pendingLayer`'s while one waits.
    private(set) var layer: Producer
    /// Simulcast: the layer to move to at its next key frame (until then `layer` keeps going).
    private(set) var pendingLayer: Producer? {
        didSet {
            guard pendingLayer !== oldValue else { return }
            if let oldValue, oldValue !== layer { oldValue.consumers.removeAll { $0 === self } }
            if let pendingLayer, pendingLayer !== layer { pendingLayer.consumers.append(self) }
        }
    }
    /// The subscriber's preferred picture size (0 × 0: the largest layer).
    var preferredWidth = 0
    var preferredHeight = 0
    /// The subscriber's preferred frame rate (0: every frame), the temporal layers it makes the consumer send
    /// (up to `temporalTarget`; `.max`: all), and those it sends now (the target is taken at a frame that allows it).
    var preferredFrameRate = 0.0
    private(set) var temporalTarget = UInt8.max
    private(set) var temporalLayer = UInt8.max
    private var nextLayerChoice: UInt64 = 0
    private var probe = LayerProbe()
    /// Since when the link's estimate has not afforded the layer being sent (0: it does).
    private var overBudgetSince: UInt64 = 0
    var rewriter: RTPRewriter
    private(set) var paused = false
    private(set) var waitingForKeyframe: Bool
    private var lastKeyframeRequest: UInt64 = 0
    private var random: FastRandom
    let dropRate: Double
    /// RTX (RFC 4588) toward the subscriber, video only: retransmissions go out on their own
    /// SSRC and sequence numbers (with the original sequence number in front of the payload)
    /// once the subscriber's answer accepted the stream; before that, on the primary SSRC.
    let rtxSSRC: UInt32?
    let rtxPayloadType: UInt8?
    var retransmissionStream = false
    /// For a consumer of a mixer's output: the mixer slot of the participant it is sent to (its
    /// mix-minus and earmuff apply), or -1 for a listener that gets the shared mix.
    var mixerSlot = -1
    /// Fraction of this stream's packets lost (256ths) in its receiver's latest RTCP report (RFC 3550 §6.4.1).
    var reportedFractionLost: UInt8 = 0
    /// The extended highest sequence number its receiver's latest report says it received (0: no report yet).
    var reportedHighest: UInt32 = 0
    /// The Video API's subscriber audio fallback (a video session's video consumers; nil: off), and whether it has
    /// turned the video off.
    private(set) var audioFallback: AudioFallback?
    private(set) var fallbackPaused = false
    /// The loss the subscriber's receiver reports give, for the audio fallback.
    private var reportedLoss = LossWindow()
    var mixerParticipant: MixerParticipantID?
    private var rtxSequence: UInt16

    // Send statistics (RFC 3550 §6.4.1 sender info) and what the subscriber reports back.
    private(set) var packetsSent: UInt64 = 0
    private(set) var bytesSent: UInt64 = 0
    private(set) var retransmitted: UInt64 = 0
    private(set) var nacksReceived: UInt64 = 0
    private(set) var keyframeRequestsReceived: UInt64 = 0
    private(set) var testDropped: UInt64 = 0
    var reportedLost: Int64 = 0
    var reportedJitter: UInt32 = 0
    var roundTripTime: UInt64 = 0

    init(
        id: ConsumerID, producer: Producer, transport: WebRTCTransport, ssrc: UInt32, cname: String,
        initialSequence: UInt16, initialTimestamp: UInt32, dropRate: Double, seed: UInt64
    ) {
        self.id = id
        self.producer = producer
        layer = producer
        transportHandle = Unmanaged.passUnretained(transport)
        self.kind = producer.parameters.kind
        self.codec = producer.codec
        self.ssrc = ssrc
        self.cname = cname
        streamID = producer.parameters.streamID ?? producer.id.rawValue
        trackID = producer.id.rawValue
        rewriter = RTPRewriter(clockRate: producer.codec.clockRate, initialSequence: initialSequence, initialTimestamp: initialTimestamp)
        waitingForKeyframe = producer.isVideo
        self.dropRate = dropRate
        var random = FastRandom(seed: seed)
        rtxPayloadType = CodecCatalog.retransmissionPayloadType(for: producer.codec)
        rtxSSRC = rtxPayloadType == nil ? nil : UInt32(truncatingIfNeeded: random.next()) | 1
        rtxSequence = UInt16(truncatingIfNeeded: random.next()) & 0x7FFF
        self.random = random
    }

    var parameters: ConsumerParameters {
        ConsumerParameters(
            id: id, producerID: producer.id, kind: kind, codec: codec, ssrc: ssrc, cname: cname,
            streamID: streamID, trackID: trackID, extensions: .consumerSide, rtxSSRC: rtxSSRC, rtxPayloadType: rtxPayloadType)
    }

    /// Sends one canonical producer packet to the subscriber (rewritten, then protected). `source` is
    /// the producer it came from (nil: the mixer's own output): a simulcast consumer gets the packets of
    /// its layer and, while it waits to move, of `pendingLayer`, where it moves at a key frame.
    @inline(__always)
    func forward(
        _ p: UnsafeRawPointer, length: Int, sequence: UInt16, timestamp: UInt32, keyframe: Bool, temporal: TemporalMark = .none,
        now: UInt64, queue: SendQueue, from source: Producer? = nil
    ) {
        if let source, source !== layer {
            guard source === pendingLayer, keyframe else { return }
            // Out of the old layer's list (the fan-out walks only the new layer's now), into the new layer.
            layer.consumers.removeAll { $0 === self }
            layer = source
            pendingLayer = nil
            rewriter.resync()
            waitingForKeyframe = false
        }
        guard !paused, !fallbackPaused, transportHandle._withUnsafeGuaranteedRef({ $0.canSendMedia }) else { return }
        if waitingForKeyframe {
            guard keyframe else {
                if now &- lastKeyframeRequest > 1_000_000_000 { requestKeyframe(now: now) }
                return
            }
            waitingForKeyframe = false
        }
        if temporal.layer != .max, temporal.frameStart, temporalTarget != temporalLayer {
            temporalLayer = SimulcastSelection.temporalLayer(sending: temporalLayer, target: temporalTarget, at: temporal, keyframe: keyframe)
        }
        if temporal.layer != .max, temporal.layer > temporalLayer {
            rewriter.drop(sequence: sequence)
            return
        }
        guard let out = rewriter.rewrite(sequence: sequence, timestamp: timestamp, now: now) else { return }
        packetsSent &+= 1
        bytesSent &+= UInt64(length)
        if dropRate > 0, kind == .video, random.unit() < dropRate {
            testDropped &+= 1
            return
        }
        transportHandle._withUnsafeGuaranteedRef {
            $0.sendRTP(p, length: length, ssrc: ssrc, sequence: out.sequence, timestamp: out.timestamp, queue: queue)
        }
    }

    /// Answers a Generic NACK from the subscriber out of the producer's buffer.
    func retransmit(_ outputSequence: UInt16, now: UInt64, queue: SendQueue) {
        nacksReceived &+= 1
        guard let input = rewriter.inputSequence(for: outputSequence),
              let packet = layer.buffer.packet(input, now: now), let base = packet.baseAddress else { return }
        let timestamp = rewriter.outputTimestamp(for: Bytes.u32(base, 4))
        // Sent now: its abs-send-time says so (an old one would read to the subscriber's estimator as a long queue).
        if let id = RTPExtensionIDs.consumerSide.absSendTime, let view = try? RTPView(packet) {
            view.setAbsSendTime(id: id, RTPHeaderExtensionElement.absSendTime(nanoseconds: now), in: UnsafeMutableRawBufferPointer(mutating: packet))
        }
        retransmitted &+= 1
        if retransmissionStream, let rtxSSRC, let rtxPayloadType {
            transport.sendRTX(base, length: packet.count, payloadType: rtxPayloadType, ssrc: rtxSSRC, sequence: rtxSequence,
                              timestamp: timestamp, originalSequence: outputSequence, queue: queue)
            rtxSequence &+= 1
        } else {
            transport.sendRTP(base, length: packet.count, ssrc: ssrc, sequence: outputSequence, timestamp: timestamp, queue: queue)
        }
    }

    /// The subscriber asked for a key frame (PLI/FIR).
    func keyframeRequested(now: UInt64) {
        keyframeRequestsReceived &+= 1
        layer.requestKeyframe(now: now)
    }

    func requestKeyframe(now: UInt64) {
        lastKeyframeRequest = now
        layer.requestKeyframe(now: now)
    }

    /// Simulcast: chooses the layer to send (`SimulcastSelection`: the subscriber's preference, the live layers and,
    /// once the subscriber reports its link's estimate, what fits in it, with `LayerProbe` trying larger layers), at
    /// most every `SimulcastSelection.interval`; a new choice becomes `pendingLayer`, whose key frame is asked for
    /// (again each second until it comes).
    func chooseLayer(now: UInt64, immediately: Bool = false) {
        let layers = producer.layers
        guard layers.count > 1, immediately || now >= nextLayerChoice else { return }
        nextLayerChoice = now &+ SimulcastSelection.interval
        // What each layer costs this subscriber: with a preferred frame rate, only the temporal layers it would take.
        let costs = layers.map { $0.bitrate(upTo: SimulcastSelection.temporalLayer(frameRates: $0.temporalFrameRates, preferred: preferredFrameRate)) }
        let ranked = SimulcastSelection.ranked(layers.enumerated().map { index, layer in
            SimulcastSelection.Layer(width: layer.frameWidth, height: layer.frameHeight,
                                     live: layer.isLive(now: now), bitrate: costs[index])
        })
        guard let wanted = SimulcastSelection.wanted(ranked, preferredWidth: preferredWidth, preferredHeight: preferredHeight) else { return }
        var choice = wanted.index
        if let estimate = transport.currentReceiverEstimate(now: now) {
            // The link's estimate, less what the transport's audio takes.
            let budget = estimate > SimulcastSelection.audioAllowance ? estimate - SimulcastSelection.audioAllowance : 0
            // The layer last chosen (sent, or waiting for its key frame).
            let current = ranked.first { layers[$0.index] === (pendingLayer ?? layer) }
            var fitting = SimulcastSelection.fitting(ranked, upTo: wanted, budget: budget, current: current?.index)
            // Down for the link only once it has held the subscriber below its layer for a while.
            if let current, fitting.rank < current.rank, current.rank <= wanted.rank {
                if overBudgetSince == 0 { overBudgetSince = now }
                if now &- overBudgetSince < SimulcastSelection.downgradeDelay { fitting = current }
            } else {
                overBudgetSince = 0
            }
            let stepUp = ranked.first { $0.rank > fitting.rank && $0.rank <= wanted.rank }?.index
            // A probe of a layer the subscriber no longer wants (or that stopped) ends now.
            if let probed = probe.layer, !ranked.contains(where: { $0.index == probed && $0.rank <= wanted.rank }) { probe.reset() }
            let probing = probe.layer != nil
            choice = probe.decide(fitting: fitting.index, wanted: wanted.index, stepUp: stepUp, estimate: estimate,
                                  affords: { costs[$0] <= budget + budget / 4 }, now: now)
            if probing, probe.layer == nil {
                // The probe ended: the link's delay counts from now, and a layer that stopped meanwhile is not gone back to.
                overBudgetSince = 0
                if !ranked.contains(where: { $0.index == choice }) { choice = fitting.index }
            }
        } else {
            probe.reset()
        }
        let chosen = layers[choice]
        if chosen === layer {
            pendingLayer = nil
        } else if chosen !== pendingLayer || now &- lastKeyframeRequest > 1_000_000_000 {
            pendingLayer = chosen
            lastKeyframeRequest = now
            chosen.requestKeyframe(now: now)
        }
    }

    /// On the transport's tick: the audio fallback's judgement of the subscriber's latest loss report, the video turned
    /// off or on as it says. Only loss of the least the stream can send counts: a simulcast subscriber is first moved
    /// down to its smallest layer. A subscriber that turned the video off itself is not judged.
    func checkAudioFallback(now: UInt64) -> AudioFallback.Event? {
        guard var fallback = audioFallback else { return nil }
        if paused {
            if fallback.state != .normal {
                fallback.reset()
                audioFallback = fallback
                if fallbackPaused { resumeFromFallback(now: now) }
            }
            return nil
        }
        // The extended highest sequence number is 32 bits: it wraps after four billion packets.
        if reportedHighest != 0 { reportedLoss.update(expected: Int64(reportedHighest), lost: reportedLost, now: now) }
        // A simulcast subscriber's loss counts on its smallest layer, not while it tries a larger one; and not while the
        // video reaches the server itself short (the publisher's link: what never came cannot be forwarded).
        let smallest = producer.layers.count < 2 || (pendingLayer == nil && probe.layer == nil && Self.isSmallestLive(layer, of: producer.layers, now: now))
        let upstream = (producer.layers.last ?? producer).uplinkLoss.lastJudged
        if upstream == .poor || upstream == .fair { reportedLoss.reset() }
        let event = fallback.update(smallest ? reportedLoss.verdict : nil, now: now)
        switch event {
        case .disabled?, .probeFailed?: fallbackPaused = true
        case .probeStarted?:
            reportedLoss.reset()
            resumeFromFallback(now: now)
        default: break
        }
        audioFallback = fallback
        return event
    }

    /// Turns the audio fallback on, or off (the video sent again if it had turned it off).
    func setAudioFallback(_ on: Bool, now: UInt64) {
        if on {
            if audioFallback == nil { audioFallback = AudioFallback() }
        } else {
            audioFallback = nil
            if fallbackPaused { resumeFromFallback(now: now) }
        }
    }

    private func resumeFromFallback(now: UInt64) {
        fallbackPaused = false
        start(now: now)
    }

    /// Whether `layer` is the smallest of `layers` being sent (ranked as `chooseLayer` ranks them).
    private static func isSmallestLive(_ layer: Producer, of layers: [Producer], now: UInt64) -> Bool {
        let ranked = SimulcastSelection.ranked(layers.map {
            SimulcastSelection.Layer(width: $0.frameWidth, height: $0.frameHeight, live: $0.isLive(now: now))
        })
        return ranked.first.map { layers[$0.index] === layer } ?? true
    }

    /// The temporal layers the preferred frame rate asks for, of the layer being sent (taken at its next frame that allows it).
    func chooseTemporalLayer() {
        temporalTarget = SimulcastSelection.temporalLayer(frameRates: layer.temporalFrameRates, preferred: preferredFrameRate)
    }

    /// Starts (or restarts) sending: video waits for a key frame, which is requested now.
    func start(now: UInt64) {
        rewriter.resync()
        if kind == .video {
            waitingForKeyframe = true
            requestKeyframe(now: now)
        }
    }

    func pause() { paused = true }

    func resume(now: UInt64) {
        guard paused else { return }
        paused = false
        start(now: now)
    }

    /// Switches to another producer of the same kind; the subscriber sees one continuous stream.
    func switchProducer(to other: Producer, now: UInt64) {
        guard other.parameters.kind == kind, other !== producer else { return }
        detach()
        producer = other
        layer = other
        pendingLayer = nil
        attach()
        start(now: now)
    }

    /// Joins (leaves) the consumer lists of the producers it takes packets from.
    func attach() { layer.consumers.append(self) }
    func detach() {
        pendingLayer = nil
        layer.consumers.removeAll { $0 === self }
    }

    /// Sender report for this stream (RFC 3550 §6.4.1).
    func senderReport(ntp: NTPTime, now: UInt64) -> SenderReport? {
        guard rewriter.hasSent else { return nil }
        return SenderReport(
            ssrc: ssrc, ntpTimestamp: ntp.ntp(at: now), rtpTimestamp: rewriter.timestamp(at: now),
            packetCount: UInt32(truncatingIfNeeded: packetsSent), octetCount: UInt32(truncatingIfNeeded: bytesSent))
    }

    func stats() -> StreamStats {
        var s = StreamStats(ssrc: ssrc, kind: kind)
        s.packets = packetsSent
        s.bytes = bytesSent
        s.packetsLost = reportedLost
        s.jitter = Double(reportedJitter) / Double(codec.clockRate)
        s.roundTripTime = Double(roundTripTime) / 1e9
        s.nacks = nacksReceived
        s.retransmitted = retransmitted
        s.keyframeRequests = keyframeRequestsReceived
        s.paused = paused
        s.rid = layer.parameters.rid
        if layer.frameWidth > 0 { (s.frameWidth, s.frameHeight) = (layer.frameWidth, layer.frameHeight) }
        return s
    }
}
