import Crypto
import Glibc
import Runtime
import SRTP
import Wire

/// One peer connection's worth of transport (mediasoup's WebRTCTransport): ICE-lite on the
/// worker's socket, DTLS, SRTP, and the producers and consumers that ride on it.
///
/// Confined to its worker thread. Everything on the RTP path works in place on batch
/// buffers; DTLS and RTCP reports allocate, at handshake or report rate only.
final class WebRTCTransport {
    static let log = Logger(label: "media")
    let id: TransportID
    /// The worker closes transports before their router and outlives them all; `unowned(unsafe)`
    /// keeps reference counting off the per-packet path.
    unowned(unsafe) let router: Router
    unowned(unsafe) let worker: WorkerCore
    let ice: ICEServer
    private(set) var dtls: DTLSEngine?
    private(set) var dtlsRole: DTLSEngine.Role = .server
    private(set) var srtpIn: SRTPTransform?
    private(set) var srtpOut: SRTPTransform? {
        didSet { sender = srtpOut.map(Unmanaged.passUnretained) }
    }
    /// `srtpOut`, borrowed: `sendRTP` runs once per forwarded packet, and loading the strong
    /// reference there costs a retain and a release each time (`srtpOut` keeps it alive).
    private var sender: Unmanaged<SRTPTransform>?
    private(set) var state: TransportState = .new
    /// Where media goes: the ICE-selected address, prepared for `sendmmsg`.
    private let destination: UnsafeMutablePointer<sockaddr_storage>
    private(set) var selected: PeerAddress?
    /// Source addresses the worker routes to this transport (see `WorkerCore.map`).
    var routedAddresses: [PeerAddress] = []
    /// Our SSRC for RTCP RR and feedback (RFC 3550 §6.4.2 sender SSRC).
    let rtcpSSRC: UInt32
    let cname: String
    var roundTripTime: UInt64 = 0

    private(set) var producers: [Producer] = []
    private(set) var consumers: [Consumer] = []
    /// SSRC → producer, RTX flag: a short array beats hashing for a handful of streams.
    private var inbound: [(ssrc: UInt32, producer: Producer, rtx: Bool)] = []
    var midExtensionID: UInt8?
    /// Simulcast: the RID and repaired RID header extensions name each layer's streams (RFC 8852).
    var ridExtensionID: UInt8?
    var repairedRIDExtensionID: UInt8?
    /// The subscriber's latest receive-side bandwidth estimate (REMB), bits per second, and when it came.
    private(set) var receiverEstimate: UInt64 = 0
    private(set) var receiverEstimateAt: UInt64 = 0
    /// When the next RTCP report is due (0: on the first tick once connected).
    private var nextReport: UInt64 = 0
    /// Transport-wide CC arrivals from the publisher, fed back every `transportCCInterval`.
    var transportCC = TransportCCRecorder()
    private var lastTransportCC: UInt64 = 0
    static let transportCCInterval: UInt64 = 50_000_000
    private var connectedAt: UInt64 = 0
    /// After this long connected, the DTLS engine (an OpenSSL SSL object and its buffers,
    /// most of a transport's memory) is released: the peer's final-flight retransmissions
    /// are long over, and consent freshness detects a peer that went away.
    static let dtlsRetention: UInt64 = 10_000_000_000
    /// RTCP SR/RR/SDES per transport. RFC 3550 §6.2 leaves the interval to the application; as libwebrtc
    /// does, a transport that carries video reports about every second and an audio-only one about every
    /// 5 s, each interval drawn from 0.5–1.5 times that (§6.3.1), so that listeners who joined together do
    /// not all report in the same tick.
    static let videoReportInterval: UInt64 = 1_000_000_000
    static let audioReportInterval: UInt64 = 5_000_000_000
    private(set) var rtpPacketsIn: UInt64 = 0
    private(set) var rtcpPacketsIn: UInt64 = 0
    private(set) var srtpFailures: UInt64 = 0
    /// This transport's place in the worker's tick list (`WorkerCore.tickList`).
    var tickIndex = 0

    init(id: TransportID, router: Router, worker: WorkerCore, ice: ICEParameters, rtcpSSRC: UInt32, cname: String) {
        self.id = id
        self.router = router
        self.worker = worker
        self.ice = ICEServer(local: ice)
        self.rtcpSSRC = rtcpSSRC
        self.cname = cname
        destination = .allocate(capacity: 1)
        destination.initialize(to: sockaddr_storage())
    }

    deinit { destination.deallocate() }

    var canSendMedia: Bool { srtpOut != nil && selected != nil }

    // MARK: Prefetch (fan-out loops touch this transport a few consumers from now)

    /// The destination address and the SRTP sender object.
    @inline(__always)
    func prefetchSender() {
        Prefetch.object(destination, lines: 2)
        if let sender { Prefetch.object(sender.toOpaque(), lines: 2) }
    }

    /// What the SRTP sender will touch (call after `prefetchSender` had time to land).
    @inline(__always)
    func prefetchSendState() {
        sender?._withUnsafeGuaranteedRef { $0.prefetchSendState() }
    }

    // MARK: Control

    /// Sets the DTLS parameters from the remote description.
    func connect(role: DTLSEngine.Role, remoteFingerprint: (algorithm: String, value: String), remoteUsernameFragment: String?, now: UInt64) throws {
        guard dtls == nil else { return }
        ice.remoteUsernameFragment = remoteUsernameFragment
        dtlsRole = role
        dtls = try DTLSEngine(
            role: role, certificate: worker.certificate, expectedRemoteFingerprint: remoteFingerprint,
            srtpProfiles: SRTPTransform.supportedProfiles)
        worker.tickSoon(self)
        if role == .client, selected != nil { startClientHandshake(now: now) }
    }

    func add(_ producer: Producer) {
        producers.append(producer)
        if producer.isVideo { reportVideoSoon() }
        worker.tickSoon(self)
        if let ssrc = producer.ssrc { inbound.append((ssrc, producer, false)) }
        if let rtx = producer.rtxSSRC { inbound.append((rtx, producer, true)) }
    }

    func remove(_ producer: Producer) {
        producers.removeAll { $0 === producer }
        inbound.removeAll { $0.producer === producer }
    }

    func add(_ consumer: Consumer) {
        consumers.append(consumer)
        if state == .connected { consumer.start(now: worker.now) }
        if consumer.kind == .video { reportVideoSoon() }
    }

    /// Video came to a transport that reported at the audio pace: its next report within the video interval.
    private func reportVideoSoon() {
        let due = worker.now &+ WebRTCTransport.videoReportInterval
        guard nextReport > due else { return }
        nextReport = due
        worker.tickSoon(self)
    }

    /// The time to the report after this one: the transport's base interval times 0.5–1.5.
    private func reportInterval() -> UInt64 {
        let video = consumers.contains { $0.kind == .video } || producers.contains { $0.isVideo }
        let base = video ? WebRTCTransport.videoReportInterval : WebRTCTransport.audioReportInterval
        return base / 2 &+ worker.nextSeed() % base
    }

    func remove(_ consumer: Consumer) { consumers.removeAll { $0 === consumer } }

    private func setState(_ new: TransportState) {
        guard new != state else { return }
        state = new
        worker.emit(.transportState(id, new))
    }

    func close() {
        if let dtls { for datagram in dtls.close() { sendControl(datagram) } }
        setState(.closed)
    }

    /// Keys SRTP directly and selects `address`, skipping ICE and DTLS (benchmarks only).
    func installForBenchmark(profile: SRTPProfile, keys: SRTPKeys, address: PeerAddress) throws {
        srtpIn = try SRTPTransform(profile: profile, masterKey: keys.remoteKey, masterSalt: keys.remoteSalt, direction: .inbound)
        srtpOut = try SRTPTransform(profile: profile, masterKey: keys.localKey, masterSalt: keys.localSalt, direction: .outbound)
        selected = address
        address.write(to: destination, ipv6Socket: worker.socket.isIPv6)
        worker.map(address, to: self)
        state = .connected
        dtls = nil  // as in steady state, `dtlsRetention` after the handshake
        for consumer in consumers { consumer.start(now: worker.now) }
    }

    // MARK: ICE

    /// A Binding request routed here by its USERNAME.
    func handleSTUN(_ message: STUNMessage, bytes: UnsafeRawBufferPointer, from source: PeerAddress, now: UInt64) {
        let outcome = ice.handleRequest(message, bytes: bytes, from: source, now: now)
        if outcome.valid { worker.map(source, to: self) }
        if let response = outcome.response {
            var storage = sockaddr_storage()
            source.write(to: &storage, ipv6Socket: worker.socket.isIPv6)
            response.withUnsafeBytes { worker.queue.enqueue($0, to: &storage) }
        }
        if let address = outcome.selected {
            selected = address
            address.write(to: destination, ipv6Socket: worker.socket.isIPv6)
            if state == .new { setState(.connecting) }
            if dtlsRole == .client, dtls?.state == .new { startClientHandshake(now: now) }
        }
    }

    private func startClientHandshake(now: UInt64) {
        guard let dtls else { return }
        for datagram in dtls.start(now: now) { sendControl(datagram) }
    }

    // MARK: DTLS

    func handleDTLS(_ bytes: UnsafeRawBufferPointer, now: UInt64) {
        guard let dtls else { return }
        let output = dtls.receive(bytes, now: now)
        apply(output, now: now)
        worker.tickSoon(self)  // a retransmission timer may have started
    }

    private func apply(_ output: DTLSOutput, now: UInt64) {
        for datagram in output.datagrams { sendControl(datagram) }
        guard let change = output.stateChange else { return }
        switch change {
        case .connected:
            guard let dtls, let keys = dtls.srtpKeys, let profile = dtls.srtpProfile else {
                setState(.failed)
                return
            }
            do {
                srtpIn = try SRTPTransform(profile: profile, masterKey: keys.remoteKey, masterSalt: keys.remoteSalt, direction: .inbound)
                srtpOut = try SRTPTransform(profile: profile, masterKey: keys.localKey, masterSalt: keys.localSalt, direction: .outbound)
            } catch {
                WebRTCTransport.log.warning("SRTP setup failed", ["transport": id.rawValue, "profile": "\(profile)", "reason": "\(error)"])
                setState(.failed)
                return
            }
            setState(.connected)
            connectedAt = now
            for consumer in consumers { consumer.start(now: now) }
            for producer in producers { producer.requestKeyframe(now: now) }
        case .failed(let failure):
            // Rare and worth an operator's eye: the peer's stack, its certificate or the path.
            WebRTCTransport.log.warning("DTLS failed", ["transport": id.rawValue, "role": "\(dtlsRole)", "reason": "\(failure)"])
            setState(.failed)
        case .closed:
            setState(.closed)
        case .new, .connecting:
            break
        }
    }

    // MARK: RTP / RTCP in

    @inline(__always)
    func handleRTP(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64, queue: SendQueue) {
        guard let srtpIn else { return }
        var length = length
        guard srtpIn.unprotectRTP(p, length: &length) else {
            srtpFailures &+= 1
            return
        }
        rtpPacketsIn &+= 1
        let ssrc = Bytes.u32(p, 8)
        for entry in inbound where entry.ssrc == ssrc {
            entry.producer.receive(p, length: length, isRTX: entry.rtx, now: now, queue: queue)
            return
        }
        learnSSRC(ssrc, p, length: length, now: now, queue: queue)
    }

    /// An SSRC the SDP did not list: bind it through the MID header extension (RFC 8843 §15) and, for a
    /// simulcast layer, its RID (the layer's own stream) or repaired RID (the layer's RTX stream).
    private func learnSSRC(_ ssrc: UInt32, _ p: UnsafeMutableRawPointer, length: Int, now: UInt64, queue: SendQueue) {
        let bytes = UnsafeRawBufferPointer(start: p, count: length)
        guard inbound.count < 32, let view = try? RTPView(bytes) else { return }
        let mid = midExtensionID.flatMap { view.mid(id: $0, in: bytes) }
        let rid = ridExtensionID.flatMap { view.mid(id: $0, in: bytes) }
            ?? repairedRIDExtensionID.flatMap { view.mid(id: $0, in: bytes) }
        guard mid != nil || rid != nil, let producer = producers.first(where: {
            (mid == nil || $0.parameters.mid == mid) && $0.parameters.rid == rid
        }) else { return }
        let pt = Bytes.byte(p, 1) & 0x7F
        let rtx: Bool
        if pt == producer.parameters.rtxPayloadType, producer.rtxSSRC == nil {
            producer.bind(rtxSSRC: ssrc)
            rtx = true
        } else if pt == producer.parameters.codec.payloadType, producer.ssrc == nil {
            producer.bind(ssrc: ssrc)
            rtx = false
        } else {
            return
        }
        inbound.append((ssrc, producer, rtx))
        producer.receive(p, length: length, isRTX: rtx, now: now, queue: queue)
    }

    func handleRTCP(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64, queue: SendQueue) {
        guard let srtpIn else { return }
        var length = length
        guard srtpIn.unprotectRTCP(p, length: &length) else {
            srtpFailures &+= 1
            return
        }
        rtcpPacketsIn &+= 1
        let bytes = UnsafeRawBufferPointer(start: p, count: length)
        var iterator = RTCPCompoundIterator(bytes)
        while let item = try? iterator.next() {
            let base = p + item.range.lowerBound
            let size = item.range.count
            switch (item.header.packetType, item.header.count) {
            case (.senderReport, let blocks):
                guard size >= 28 else { continue }
                let sender = Bytes.u32(base, 4)
                if let entry = inbound.first(where: { $0.ssrc == sender && !$0.rtx }) {
                    let compact = UInt32(truncatingIfNeeded: Bytes.u64(base, 8) >> 16)
                    entry.producer.statistics.senderReportReceived(compactNTP: compact, now: now)
                }
                handleReportBlocks(base + 28, count: Int(blocks), available: size - 28, now: now)
            case (.receiverReport, let blocks):
                guard size >= 8 else { continue }
                handleReportBlocks(base + 8, count: Int(blocks), available: size - 8, now: now)
            case (.transportLayerFeedback, 1):
                guard size >= 12, let consumer = consumer(ssrc: Bytes.u32(base, 8)) else { continue }
                var o = 12
                while o + 4 <= size {
                    let pid = Bytes.u16(base, o)
                    let blp = Bytes.u16(base, o + 2)
                    consumer.retransmit(pid, now: now, queue: queue)
                    if blp != 0 {
                        for bit in 0..<16 where blp & (1 << UInt16(bit)) != 0 {
                            consumer.retransmit(pid &+ UInt16(bit + 1), now: now, queue: queue)
                        }
                    }
                    o += 4
                }
            case (.payloadSpecificFeedback, 1):
                guard size >= 12, let consumer = consumer(ssrc: Bytes.u32(base, 8)) else { continue }
                consumer.keyframeRequested(now: now)
            case (.payloadSpecificFeedback, 15):
                // REMB: the subscriber's estimate of its link, which its simulcast consumers' layers must fit in.
                guard size >= 20, Bytes.u32(base, 12) == 0x5245_4D42 else { continue }
                let word = Bytes.u32(base, 16)
                let exponent = (word >> 18) & 0x3F
                receiverEstimate = exponent >= 40 ? UInt64(UInt32.max) : UInt64(word & 0x3_FFFF) << UInt64(exponent)
                receiverEstimateAt = now
            case (.payloadSpecificFeedback, 4):
                var o = 12
                while o + 8 <= size {
                    consumer(ssrc: Bytes.u32(base, o))?.keyframeRequested(now: now)
                    o += 8
                }
            default:
                continue
            }
        }
    }

    private func consumer(ssrc: UInt32) -> Consumer? {
        for consumer in consumers where consumer.ssrc == ssrc { return consumer }
        return nil
    }

    /// Report blocks about our consumers' streams: loss, jitter and RTT (RFC 3550 §6.4.1).
    private func handleReportBlocks(_ p: UnsafeRawPointer, count: Int, available: Int, now: UInt64) {
        var o = 0
        for _ in 0..<count {
            guard o + 24 <= available else { return }
            if let consumer = consumer(ssrc: Bytes.u32(p, o)) {
                let lost = Int64(Int32(bitPattern: Bytes.u32(p, o + 4) << 8) >> 8)
                consumer.reportedLost = lost
                consumer.reportedFractionLost = Bytes.byte(p, o + 4)
                consumer.reportedHighest = Bytes.u32(p, o + 8)
                consumer.reportedJitter = Bytes.u32(p, o + 12)
                let lsr = Bytes.u32(p, o + 16)
                let dlsr = Bytes.u32(p, o + 20)
                if lsr != 0 {
                    let nowCompact = worker.ntp.compact(at: now)
                    let rtt = nowCompact &- lsr &- dlsr
                    if rtt < 0x0010_0000 {  // under 16 s: otherwise clocks are nonsense
                        consumer.roundTripTime = NTPTime.compactToNanoseconds(rtt)
                        roundTripTime = consumer.roundTripTime
                    }
                }
            }
            o += 24
        }
    }

    // MARK: Out

    /// Copies an unprotected RTP packet into a send slot with this consumer's header
    /// fields, protects it there, and queues it.
    @inline(__always)
    func sendRTP(_ p: UnsafeRawPointer, length: Int, ssrc: UInt32, sequence: UInt16, timestamp: UInt32, queue: SendQueue) {
        guard let sender else { return }
        let slot = queue.reserve()
        slot.copyMemory(from: p, byteCount: length)
        Bytes.put16(slot, 2, sequence)
        Bytes.put32(slot, 4, timestamp)
        Bytes.put32(slot, 8, ssrc)
        var size = length
        guard sender._withUnsafeGuaranteedRef({ $0.protectRTP(slot, length: &size, capacity: queue.slotCapacity) }) else { return }
        queue.commitSegment(length: size, to: destination)
    }

    /// Wraps a stored packet as RTX (RFC 4588 §4): the header with the RTX payload type, SSRC
    /// and sequence number, the original sequence number, then the original payload (its
    /// padding dropped); protects and queues it.
    func sendRTX(
        _ p: UnsafeRawPointer, length: Int, payloadType: UInt8, ssrc: UInt32, sequence: UInt16, timestamp: UInt32,
        originalSequence: UInt16, queue: SendQueue
    ) {
        guard let sender, let view = try? RTPView(UnsafeRawBufferPointer(start: p, count: length)) else { return }
        let header = view.headerLength
        let payload = view.payloadLength
        guard header + 2 + payload + sender._withUnsafeGuaranteedRef({ $0.tagLength }) <= queue.slotCapacity else { return }
        let slot = queue.reserve()
        slot.copyMemory(from: p, byteCount: header)
        Bytes.setByte(slot, 0, Bytes.byte(p, 0) & ~0x20)
        Bytes.setByte(slot, 1, Bytes.byte(p, 1) & 0x80 | payloadType)
        Bytes.put16(slot, 2, sequence)
        Bytes.put32(slot, 4, timestamp)
        Bytes.put32(slot, 8, ssrc)
        Bytes.put16(slot, header, originalSequence)
        (slot + header + 2).copyMemory(from: p + header, byteCount: payload)
        var size = header + 2 + payload
        guard sender._withUnsafeGuaranteedRef({ $0.protectRTP(slot, length: &size, capacity: queue.slotCapacity) }) else { return }
        queue.commit(length: size, to: destination)
    }

    /// Protects and queues an RTCP compound.
    func sendRTCP(_ packets: [RTCPPacket]) {
        guard let srtpOut, selected != nil, let bytes = try? RTCPPacket.serializeCompound(packets),
              bytes.count + 32 <= worker.queue.slotCapacity else { return }
        let queue = worker.queue
        let slot = queue.reserve()
        bytes.withUnsafeBytes { slot.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
        var size = bytes.count
        guard srtpOut.protectRTCP(slot, length: &size, capacity: queue.slotCapacity) else { return }
        queue.commit(length: size, to: destination)
    }

    /// Queues a DTLS datagram to the selected address.
    private func sendControl(_ datagram: [UInt8]) {
        guard selected != nil else { return }
        datagram.withUnsafeBytes { worker.queue.enqueue($0, to: destination) }
    }

    /// `receiverEstimate` while it is current (a receiver sends one every second or so), else nil.
    func currentReceiverEstimate(now: UInt64) -> UInt64? {
        receiverEstimateAt != 0 && now &- receiverEstimateAt < 5_000_000_000 ? receiverEstimate : nil
    }

    /// A publisher audio fallback moved: its publisher is told whether to send the video now, and with the video
    /// turned off or on, so are the track's subscribers that take it.
    private func publisherFallbackMoved(_ track: Producer, _ event: AudioFallback.Event) {
        let change = AudioFallback.change(event)
        worker.emit(.publisherAudioFallback(track.id, change, sendVideo: track.publisherFallback?.sendsVideo ?? true))
        guard let change, change == .videoDisabled || change == .videoEnabled else { return }
        var told = Set<ConsumerID>()  // a consumer moving between layers is in both lists
        for layer in track.layers.isEmpty ? [track] : track.layers {
            for consumer in layer.consumers where !consumer.paused && !consumer.fallbackPaused && told.insert(consumer.id).inserted {
                worker.emit(.audioFallback(consumer.id, change))
            }
        }
    }

    // MARK: Timers

    /// Runs the transport's timers and returns when it next has one due: the worker's next tick while
    /// it connects or publishes (DTLS retransmission, NACK and keyframe timers, transport-wide CC),
    /// otherwise its next report, DTLS release or consent expiry. A listener's transport is visited
    /// once every few seconds rather than on every 20 ms tick; whatever could bring a timer forward
    /// (DTLS input, a new producer) asks the worker for the next tick (`WorkerCore.tickSoon`).
    func tick(now: UInt64) -> UInt64 {
        if let dtls, let deadline = dtls.nextTimeout(), now >= deadline {
            apply(dtls.handleTimeout(now: now), now: now)
        }
        if ice.tick(now: now) == .failed { setState(.failed) }
        guard state == .connected else { return now }
        if dtls != nil, now &- connectedAt > WebRTCTransport.dtlsRetention { dtls = nil }
        for producer in producers {
            producer.tick(now: now)
            if let rids = producer.checkUnusedLayers(now: now) { worker.emit(.unusedLayers(producer.id, rids: rids)) }
            guard producer.isVideo, producer.isTrack else { continue }
            producer.judgeUplink(now: now)
            if producer.publisherFallback != nil, let event = producer.checkPublisherAudioFallback(now: now) {
                publisherFallbackMoved(producer, event)
            }
        }
        var choosing = false
        for consumer in consumers where consumer.producer.layers.count > 1 {
            consumer.chooseLayer(now: now)
            choosing = true
        }
        for consumer in consumers where consumer.audioFallback != nil {
            if let change = AudioFallback.change(consumer.checkAudioFallback(now: now)) { worker.emit(.audioFallback(consumer.id, change)) }
        }
        for consumer in consumers where consumer.preferredFrameRate > 0 || consumer.temporalTarget != .max {
            consumer.chooseTemporalLayer()
            choosing = true
        }
        if transportCC.count > 0, now &- lastTransportCC >= WebRTCTransport.transportCCInterval {
            lastTransportCC = now
            let media = producers.first?.ssrc ?? 0
            for feedback in transportCC.takeFeedback(senderSSRC: rtcpSSRC, mediaSSRC: media) {
                sendRTCP([.transportFeedback(feedback)])
            }
        }
        if now >= nextReport {
            sendReports(now: now)
            nextReport = now &+ reportInterval()
        }
        if !producers.isEmpty || transportCC.count > 0 { return now }
        var next = min(nextReport, ice.consentDeadline)
        if choosing { next = min(next, now &+ SimulcastSelection.interval) }
        if let dtls {
            next = min(next, connectedAt &+ WebRTCTransport.dtlsRetention &+ 1)
            if let deadline = dtls.nextTimeout() { next = min(next, deadline) }
        }
        return next
    }

    /// SR per consumer stream that has sent, RR about every producer stream, SDES CNAME.
    private func sendReports(now: UInt64) {
        var packets: [RTCPPacket] = []
        var chunks: [SourceDescription.Chunk] = []
        for consumer in consumers {
            if let sr = consumer.senderReport(ntp: worker.ntp, now: now) {
                packets.append(.senderReport(sr))
                chunks.append(SourceDescription.Chunk(source: consumer.ssrc, items: [.init(type: .cname, text: consumer.cname)]))
            }
            if packets.count >= 16 {
                packets.append(.sourceDescription(SourceDescription(chunks: chunks)))
                sendRTCP(packets)
                packets.removeAll()
                chunks.removeAll()
            }
        }
        var blocks: [ReportBlock] = []
        for producer in producers {
            guard let ssrc = producer.ssrc, producer.statistics.packets > 0 else { continue }
            blocks.append(producer.statistics.reportBlock(ssrc: ssrc, now: now))
        }
        if !blocks.isEmpty || packets.isEmpty {
            for start in stride(from: 0, to: max(1, blocks.count), by: 31) {
                let slice = Array(blocks[start..<min(blocks.count, start + 31)])
                packets.append(.receiverReport(ReceiverReport(ssrc: rtcpSSRC, reports: slice)))
            }
            chunks.append(SourceDescription.Chunk(source: rtcpSSRC, items: [.init(type: .cname, text: cname)]))
        }
        packets.append(.sourceDescription(SourceDescription(chunks: chunks)))
        sendRTCP(packets)
    }

    func stats() -> TransportStats {
        var producerStats: [String: StreamStats] = [:]
        for producer in producers { producerStats[producer.id.rawValue] = producer.stats() }
        var consumerStats: [String: StreamStats] = [:]
        for consumer in consumers { consumerStats[consumer.id.rawValue] = consumer.stats() }
        return TransportStats(
            id: id, state: state, selectedAddress: selected?.description, srtpProfile: srtpOut?.profile.openSSLName,
            transportFeedbackSent: transportCC.feedbackSent, receiverEstimate: receiverEstimateAt == 0 ? nil : receiverEstimate,
            producers: producerStats, consumers: consumerStats)
    }
}
