import Wire

/// An incoming track on a publishing transport (mediasoup's Producer + RtpStreamRecv).
///
/// Owns what is per source, not per receiver: the retransmission buffer (consumers map
/// their NACKs back to it), reception statistics, the NACK generator toward the sender,
/// the key frame request throttle and the audio level used for active speaker.
/// Confined to its worker thread.
final class Producer {
    let id: ProducerID
    let parameters: ProducerParameters
    /// The codec with the canonical payload type consumers see.
    let codec: RTPCodec
    /// Closed before its transport and router (see `WorkerCore.closeTransport`), so these never
    /// dangle; `unowned(unsafe)` keeps reference counting off the per-packet path.
    unowned(unsafe) let transport: WebRTCTransport
    unowned(unsafe) let router: Router
    private(set) var ssrc: UInt32?
    private(set) var rtxSSRC: UInt32?
    var consumers: [Consumer] = [] { didSet { consumersVersion &+= 1 } }
    /// Bumped by every change of `consumers`: a mixer keeps its own lists of its output's
    /// consumers and rebuilds them when this moves.
    private(set) var consumersVersion: UInt64 = 0
    var paused = false
    /// Set while a mixer decodes this track: payloads go to its jitter buffer, and the level for
    /// active speaker comes from the decoded signal (`noteLoudness`) instead of RFC 6464.
    var mixerInput: RTPMixerInput?
    /// Recorders' copies of what arrives (individual-stream archives).
    var taps: [ProducerTap] = []
    /// A simulcast track's layers in the offer's order, this producer among them (empty for one
    /// stream). Every layer's consumers are the track's: each consumer forwards one layer at a time
    /// (`Consumer.layer`). Cleared when the track closes (the layers hold each other).
    var layers: [Producer] = []
    /// What the router and the engine know: a producer of one stream, or a simulcast track's producer
    /// (its layer listed last), not the track's other layers.
    var isTrack: Bool { layers.isEmpty || layers.last === self }
    /// A simulcast track's layers its publisher is asked to pause (made at the first check).
    private var unused: UnusedLayers?
    /// When the last packet came (simulcast: a layer is live while it sends).
    private(set) var lastPacketAt: UInt64 = 0
    /// Whether a packet came within `SimulcastSelection.liveWindow`.
    func isLive(now: UInt64) -> Bool { lastPacketAt != 0 && now &- lastPacketAt < SimulcastSelection.liveWindow }
    /// Bits per second received, over about the last second (simulcast: what a layer costs a subscriber).
    private(set) var bitrate: UInt64 = 0
    private var rateBytes: UInt64 = 0
    private var rateSince: UInt64 = 0
    /// Frames per second of each temporal layer (VP8's TID 0–3; all 0 for a stream without them), over about the
    /// last two seconds, and the frames counted since the last measure.
    private(set) var temporalFrameRates = [Double](repeating: 0, count: 4)
    private var framesByTemporalLayer = [UInt32](repeating: 0, count: 4)
    /// Bits per second of each temporal layer, measured as `bitrate` is, and the bytes since the last measure.
    private(set) var temporalBitrates = [UInt64](repeating: 0, count: 4)
    private var bytesByTemporalLayer = [UInt64](repeating: 0, count: 4)
    /// What sending this producer to a subscriber taking temporal layers up to `temporalLayer` costs, bits per second
    /// (all of `bitrate` for `.max` or a stream without temporal layers).
    func bitrate(upTo temporalLayer: UInt8) -> UInt64 {
        guard temporalLayer != .max, temporalBitrates.contains(where: { $0 > 0 }) else { return bitrate }
        return temporalBitrates.prefix(Int(min(temporalLayer, 3)) + 1).reduce(0, +)
    }

    /// The picture size of the newest key frame (VP8 frame header, H.264 SPS; 0 until one came).
    private(set) var frameWidth = 0
    private(set) var frameHeight = 0

    var statistics: ReceiveStatistics
    var nack = NackGenerator()
    var keyframeThrottle = KeyframeRequestThrottle()
    let buffer: RetransmissionBuffer
    /// Extension id on the publisher's side → id on the consumer side (0: strip).
    private let extensionMap: UnsafeMutablePointer<UInt8>
    let sendsNACKs: Bool
    private(set) var keyframeRequests: UInt64 = 0
    private(set) var retransmissionsReceived: UInt64 = 0
    /// Retransmissions that filled a gap (counted among `statistics.packets`, unlike duplicates and padding).
    private(set) var repairs: UInt64 = 0
    /// The loss of a video track on its way to the server (`judgeUplink`): its publisher's own link.
    private(set) var uplinkLoss = LossWindow()
    /// The Video API's publisher audio fallback (on a video track whose publisher asked for it; nil: off), judged by
    /// `uplinkLoss`.
    private(set) var publisherFallback: AudioFallback?
    private(set) var lastKeyframeAt: UInt64 = 0

    // Audio level over the current active-speaker interval (RFC 6464: 0 loud ... 127 silent).
    private(set) var loudnessSum: UInt64 = 0
    private(set) var loudnessCount: UInt64 = 0
    private(set) var loudnessPeak = 0
    /// The consumer-side abs-send-time id (0: none), stamped with the server's time: the value for `sendTimeAt`
    /// (a receive batch's packets share their time, and the conversion divides).
    private let sendTimeID: UInt8
    private var sendTime: UInt32 = 0
    private var sendTimeAt: UInt64 = 0

    init(id: ProducerID, parameters: ProducerParameters, codec: RTPCodec, transport: WebRTCTransport, router: Router) {
        self.id = id
        self.parameters = parameters
        self.codec = codec
        self.transport = transport
        self.router = router
        ssrc = parameters.ssrc
        rtxSSRC = parameters.rtxSSRC
        statistics = ReceiveStatistics(clockRate: codec.clockRate)
        let video = parameters.kind == .video
        buffer = RetransmissionBuffer(slots: video ? 1024 : 64, maxAge: video ? 2_000_000_000 : 1_000_000_000)
        sendsNACKs = parameters.codec.feedback.contains("nack") && video
        extensionMap = .allocate(capacity: 256)
        extensionMap.initialize(repeating: 0, count: 256)
        let own = parameters.extensions
        let theirs = RTPExtensionIDs.consumerSide
        if let from = own.audioLevel, let to = theirs.audioLevel, parameters.kind == .audio { extensionMap[Int(from)] = to }
        if let from = own.absSendTime, let to = theirs.absSendTime { extensionMap[Int(from)] = to }
        sendTimeID = theirs.absSendTime ?? 0
    }

    deinit { extensionMap.deallocate() }

    func bind(ssrc: UInt32) { self.ssrc = ssrc }
    func bind(rtxSSRC: UInt32) { self.rtxSSRC = rtxSSRC }

    var isVideo: Bool { parameters.kind == .video }

    /// Handles one unprotected RTP packet from the publisher, in place in the receive buffer.
    /// `isRTX` packets are unwrapped first (RFC 4588 §4).
    @inline(__always)
    func receive(_ p: UnsafeMutableRawPointer, length: Int, isRTX: Bool, now: UInt64, queue: SendQueue) {
        guard let view = try? RTPView(UnsafeRawBufferPointer(start: p, count: length)) else { return }
        if let id = parameters.extensions.transportCC,
           let sequence = view.transportSequenceNumber(id: id, in: UnsafeRawBufferPointer(start: p, count: length)) {
            transport.transportCC.record(sequence, now: now)
        }
        var length = length
        var payloadLength = view.payloadLength
        if isRTX {
            // OSN in the first two payload bytes; shift the payload down over it.
            guard payloadLength >= 2, let primary = ssrc else { return }
            let osn = Bytes.u16(p, view.payloadOffset)
            let tail = length - view.payloadOffset - 2
            (p + view.payloadOffset).copyMemory(from: p + view.payloadOffset + 2, byteCount: tail)
            length -= 2
            payloadLength -= 2
            Bytes.put16(p, 2, osn)
            Bytes.put32(p, 8, primary)
            Bytes.setByte(p, 1, Bytes.byte(p, 1) & 0x80 | parameters.codec.payloadType)
            retransmissionsReceived += 1
            if payloadLength == 0 { return }
        } else if Bytes.byte(p, 1) & 0x7F != parameters.codec.payloadType {
            return  // a payload type we did not negotiate (or RED/FEC we do not carry)
        }
        let sequence = Bytes.u16(p, 2)
        let timestamp = Bytes.u32(p, 4)
        if buffer.contains(sequence, now: now) { return }  // duplicate (answered twice)
        lastPacketAt = now
        statistics.received(sequence: sequence, timestamp: timestamp, length: length, now: now)
        if isRTX { repairs &+= 1 }
        if sendsNACKs, nack.received(sequence, now: now) == .gapTooLarge {
            requestKeyframe(now: now)
        }
        // The sender's RFC 6464 level: the loudness of a forwarded stream; for a mixed one, what the mixer
        // ranks inputs by before it decodes them (its loudness then comes from the decoded signal).
        var headerLevel: UInt8 = RTPMixerInput.noLevel
        if parameters.kind == .audio, let id = parameters.extensions.audioLevel,
           let level = view.audioLevel(id: id, in: UnsafeRawBufferPointer(start: p, count: length)) {
            headerLevel = level.level
            if mixerInput == nil {
                let loudness = 127 - Int(level.level)
                loudnessSum &+= UInt64(loudness)
                loudnessCount &+= 1
                if loudness > loudnessPeak { loudnessPeak = loudness }
            }
        }
        canonicalize(p, view: view, now: now)
        var keyframe = false
        var temporal = TemporalMark.none
        if isVideo {
            let payload = p + view.payloadOffset
            if codec.name == "VP8" {
                if let d = VP8PayloadDescriptor(payload, length: payloadLength) {
                    keyframe = d.startsKeyframe(in: payload, length: payloadLength)
                    if let layer = d.temporalLayer {
                        temporal = TemporalMark(layer: layer, frameStart: d.startsFrame, sync: d.layerSync)
                        if d.startsFrame { framesByTemporalLayer[Int(layer)] &+= 1 }
                        bytesByTemporalLayer[Int(layer)] &+= UInt64(length)
                    }
                }
            } else {
                keyframe = KeyframeDetector.isH264Keyframe(payload, length: payloadLength)
            }
            if keyframe {
                lastKeyframeAt = now
                keyframeThrottle.keyframeReceived()
                let size = codec.name == "VP8"
                    ? VP8PayloadDescriptor.keyframeSize(payload, length: payloadLength)
                    : H264Parameters.keyframeSize(payload, length: payloadLength)
                if let size {
                    frameWidth = size.width
                    frameHeight = size.height
                }
            }
        }
        buffer.store(p, length: length, sequenceNumber: sequence, now: now)
        if paused { return }
        if !taps.isEmpty {
            let marker = Bytes.byte(p, 1) & 0x80 != 0
            for tap in taps {
                tap.capture(p + view.payloadOffset, length: payloadLength, sequence: sequence, timestamp: timestamp, marker: marker, now: now)
            }
        }
        if let input = mixerInput {
            input.receive(p + view.payloadOffset, length: payloadLength, sequence: sequence, timestamp: timestamp,
                          level: headerLevel, now: now)
        }
        // To the consumers when the receive batch is done, with the batch's other packets of this producer.
        if consumers.isEmpty { return }
        transport.worker.fanout.add(self, p, length: length, sequence: sequence, timestamp: timestamp, keyframe: keyframe, temporal: temporal,
                                    now: now, queue: queue)
    }

    /// Rewrites payload type and header extension ids to the consumer-side numbering; abs-send-time becomes the
    /// time the server received the packet (its subscribers' estimates measure the links from the server).
    @inline(__always)
    private func canonicalize(_ p: UnsafeMutableRawPointer, view: RTPView, now: UInt64) {
        Bytes.setByte(p, 1, Bytes.byte(p, 1) & 0x80 | codec.payloadType)
        guard view.extensionProfile != nil else { return }
        let end = view.extensionOffset + view.extensionLength
        var o = view.extensionOffset
        if view.hasOneByteExtensions {
            while o < end {
                let b = Bytes.byte(p, o)
                let id = b >> 4
                if id == 0 { o += 1; continue }
                if id == 15 { return }
                let size = Int(b & 0x0F) + 1
                guard o + 1 + size <= end else { return }
                let mapped = extensionMap[Int(id)]
                if mapped == 0 {
                    (p + o).initializeMemory(as: UInt8.self, repeating: 0, count: 1 + size)
                } else {
                    Bytes.setByte(p, o, mapped << 4 | b & 0x0F)
                    if mapped == sendTimeID, size == 3 { Bytes.put24(p, o + 1, absSendTime(now)) }
                }
                o += 1 + size
            }
        } else if view.hasTwoByteExtensions {
            while o < end {
                let id = Bytes.byte(p, o)
                if id == 0 { o += 1; continue }
                guard o + 2 <= end else { return }
                let size = Int(Bytes.byte(p, o + 1))
                guard o + 2 + size <= end else { return }
                let mapped = extensionMap[Int(id)]
                if mapped == 0 {
                    (p + o).initializeMemory(as: UInt8.self, repeating: 0, count: 2 + size)
                } else {
                    Bytes.setByte(p, o, mapped)
                    if mapped == sendTimeID, size == 3 { Bytes.put24(p, o + 2, absSendTime(now)) }
                }
                o += 2 + size
            }
        }
    }

    @inline(__always)
    private func absSendTime(_ now: UInt64) -> UInt32 {
        if now != sendTimeAt {
            sendTimeAt = now
            sendTime = RTPHeaderExtensionElement.absSendTime(nanoseconds: now)
        }
        return sendTime
    }

    /// Asks the publisher for a key frame, at most once per 500 ms (later requests wait).
    func requestKeyframe(now: UInt64) {
        guard isVideo else { return }
        if keyframeThrottle.request(now: now) { sendPLI() }
    }

    /// A simulcast track: the rids of the layers no subscriber or recorder takes now (`SimulcastSelection.needed`,
    /// `UnusedLayers`), when they changed since the last call; nil otherwise and for everything else.
    func checkUnusedLayers(now: UInt64) -> [String]? {
        guard layers.count > 1, isTrack else { return nil }
        var unused = self.unused ?? UnusedLayers(count: layers.count)
        defer { self.unused = unused }
        guard unused.due(now: now) else { return nil }
        var everything = false
        var preferences: [(width: Int, height: Int)] = []
        for layer in layers {
            if !layer.taps.isEmpty { everything = true }
            // A consumer waiting to move is in two layers' lists: its preference counts twice, to no effect.
            for consumer in layer.consumers where !consumer.paused {
                if consumer.preferredWidth == 0 && consumer.preferredHeight == 0 { everything = true }
                preferences.append((consumer.preferredWidth, consumer.preferredHeight))
            }
        }
        let sizes = layers.map { SimulcastSelection.Layer(width: $0.frameWidth, height: $0.frameHeight, live: true) }
        let needed = SimulcastSelection.needed(sizes, preferences: preferences, everything: everything)
        guard unused.update(needed: needed, now: now) else { return nil }
        return zip(layers, unused.paused).compactMap { $1 ? $0.parameters.rid : nil }
    }

    /// Turns the publisher audio fallback on (for the track: the largest layer of a simulcast one) or off.
    func setPublisherAudioFallback(_ on: Bool) {
        publisherFallback = on ? publisherFallback ?? AudioFallback() : nil
    }

    /// On the transport's tick, for a video track: the loss on its publisher's link, every layer's first
    /// transmissions together (what arrives only as a repair was lost on the way: a link short of the video loses
    /// it, however much retransmission then costs).
    func judgeUplink(now: UInt64) {
        var (expected, arrived) = (statistics.expected, Int64(statistics.packets &- repairs))
        if !layers.isEmpty {
            (expected, arrived) = (0, 0)
            for layer in layers {
                expected += layer.statistics.expected
                arrived += Int64(layer.statistics.packets &- layer.repairs)
            }
        }
        uplinkLoss.update(expected: expected, lost: expected - arrived, now: now)
    }

    /// On the transport's tick, after `judgeUplink`: the publisher audio fallback's judgement of the uplink. The
    /// publisher, told to stop its video, sends none: with nothing expected there is no verdict, and after the hold
    /// it is told to try it again.
    func checkPublisherAudioFallback(now: UInt64) -> AudioFallback.Event? {
        guard var fallback = publisherFallback else { return nil }
        let event = fallback.update(uplinkLoss.verdict, now: now)
        if event == .probeStarted { uplinkLoss.reset() }
        publisherFallback = fallback
        return event
    }

    /// Periodic work: deferred key frame requests and NACKs toward the publisher.
    func tick(now: UInt64) {
        if keyframeThrottle.due(now: now) { sendPLI() }
        if now &- rateSince >= 500_000_000 {
            // A quarter of the last half second's rate and three quarters of the mean before it (about two
            // seconds' memory): a key frame's burst, several times a frame's size, moves it little.
            if rateSince != 0 {
                let seconds = Double(max(1, now &- rateSince)) / 1e9
                let rate = UInt64(Double(statistics.bytes &- rateBytes) * 8 / seconds)
                bitrate = bitrate == 0 ? rate : (bitrate * 3 + rate) / 4
                for t in 0..<4 {
                    let frames = Double(framesByTemporalLayer[t]) / seconds
                    temporalFrameRates[t] = temporalFrameRates[t] == 0 ? frames : (temporalFrameRates[t] * 3 + frames) / 4
                    framesByTemporalLayer[t] = 0
                    let layerRate = UInt64(Double(bytesByTemporalLayer[t]) * 8 / seconds)
                    temporalBitrates[t] = temporalBitrates[t] == 0 ? layerRate : (temporalBitrates[t] * 3 + layerRate) / 4
                    bytesByTemporalLayer[t] = 0
                }
            }
            rateBytes = statistics.bytes
            rateSince = now
        }
        if sendsNACKs, let ssrc {
            let lost = nack.due(now: now, rtt: transport.roundTripTime)
            if !lost.isEmpty {
                let packet = RTCPPacket.nack(GenericNACK(senderSSRC: transport.rtcpSSRC, mediaSSRC: ssrc, lost: lost))
                transport.sendRTCP([packet])
            }
        }
    }

    private func sendPLI() {
        guard let ssrc else { return }
        keyframeRequests += 1
        transport.sendRTCP([.pictureLossIndication(PictureLossIndication(senderSSRC: transport.rtcpSSRC, mediaSSRC: ssrc))])
    }

    /// Adds one decoded frame's loudness (0 silent ... 127 loudest) to the interval's level.
    func noteLoudness(_ loudness: Int) {
        loudnessSum &+= UInt64(max(0, loudness))
        loudnessCount &+= 1
        if loudness > loudnessPeak { loudnessPeak = loudness }
    }

    /// Loudness over the interval since the last call (0 silent ... 127 loudest), and reset.
    func takeLoudness() -> Int { takeLevel().mean }

    /// Mean and peak loudness since the last call, and reset.
    func takeLevel() -> (mean: Int, peak: Int) {
        defer { loudnessSum = 0; loudnessCount = 0; loudnessPeak = 0 }
        return (loudnessCount == 0 ? 0 : Int(loudnessSum / loudnessCount), loudnessPeak)
    }

    func stats() -> StreamStats {
        var s = StreamStats(ssrc: ssrc ?? 0, kind: parameters.kind)
        s.packets = statistics.packets
        s.bytes = statistics.bytes
        s.packetsLost = statistics.cumulativeLost
        s.jitter = Double(statistics.jitter) / Double(codec.clockRate)
        s.roundTripTime = Double(transport.roundTripTime) / 1e9
        s.retransmitted = retransmissionsReceived
        s.keyframeRequests = keyframeRequests
        s.paused = paused
        s.rid = parameters.rid
        s.bitrate = bitrate
        if frameWidth > 0 { (s.frameWidth, s.frameHeight) = (frameWidth, frameHeight) }
        return s
    }
}
