import Audio
import CShims
import Crypto
import Foundation
import Media
import MediaLoad
import Runtime
import SRTP
import Wire

/// One client-role peer connection of the SDK: publishing (Opus from an `AudioSource`, VP8 from
/// an IVF recording, or several as simulcast layers) or subscribing (Opus through a `JitterBuffer`, decoded every 20 ms to an
/// `AudioSink`; VP8 counted), over a
/// `ClientTransport`. Confined to the media loop's thread; `MediaPeerHandle` reaches it.
final class MediaPeer: Selectable {
    struct AudioOut {
        var source: AudioSource
        var codec: OpusCodec
        var frame = AudioFrame(rate: .hz48000)
        var ssrc: UInt32
        var sequence: UInt16 = 0
        var timestamp: UInt32 = 0
        var levelID: UInt8
        var nextSend: UInt64 = 0
    }

    /// One size of the video: the only one, or a simulcast layer named by `rid`.
    struct VideoOut {
        var capture: VideoCapture
        var ssrc: UInt32
        /// A simulcast layer's RTP stream id, sent in every packet's RID header extension (RFC 8852).
        var rid: String? = nil
        /// No subscriber takes this size (`video:unusedLayers`): not sent until one does.
        var unused = false
        var packetsSent = 0
        var sequence: UInt16 = 0
        var timestamp: UInt32 = 0
        var frame = 0
        var loopStart: UInt64 = 0
        var origin: UInt64 = 0
        var pictureID: UInt16 = 0
        var keyframeRequested = false
    }

    /// A received stream: whose it is and what to do with it.
    struct Incoming {
        var ssrc: UInt32
        var member: String
        var video: Bool
        /// The payload type the offer gave VP8 on this video stream (key frames are counted for it only).
        var vp8PayloadType: UInt8? = nil
        var decoder: OpusCodec?
        /// Received Opus packets, reordered and timed out to the decoder once per 20 ms.
        var jitter: JitterBuffer?
        /// When the next 20 ms of this stream is due at the sink (monotonic ns; 0 before the first).
        var nextPlayout: UInt64 = 0
        /// What arrived of it, for the receiver reports the server judges this client's link by (its audio fallback,
        /// round-trip times).
        var statistics: ReceiveStatistics

        init(ssrc: UInt32, member: String, video: Bool, vp8PayloadType: UInt8? = nil, decoder: OpusCodec? = nil, jitter: JitterBuffer? = nil) {
            (self.ssrc, self.member, self.video, self.vp8PayloadType, self.decoder, self.jitter) = (ssrc, member, video, vp8PayloadType, decoder, jitter)
            statistics = ReceiveStatistics(clockRate: video ? 90_000 : 48_000)
        }
    }

    /// The SSRC this peer's receiver reports come from, and when the next is due.
    private let reportSSRC = SystemRandom().next(UInt32.self) | 1
    private var nextReport: UInt64 = 0
    /// About every second (RFC 3550's interval for a session this small, varied by half either way).
    static let reportInterval: UInt64 = 1_000_000_000

    let transport: ClientTransport
    let loop: EventLoop
    private let batch = DatagramBatch(capacity: 16, stride: 2048)
    private let buffer = UnsafeMutableRawPointer.allocate(byteCount: 2048, alignment: 16)
    private var frame = AudioFrame(rate: .hz48000)
    var audioOut: AudioOut?
    /// The video's sizes: one, or the simulcast layers smallest first.
    var videoOut: [VideoOut] = []
    /// The header extension id the offer gave the RID (simulcast only).
    static let ridExtensionID: UInt8 = 2
    var incoming: [Incoming] = []
    var sink: AudioSink?
    var videoSink: VideoFrameCounter?
    var muted = false
    private(set) var videoPaused = false
    private var lastHousekeeping: UInt64 = 0
    private(set) var closed = false
    private(set) var packetsSent = 0
    private(set) var packetsReceived = 0

    /// `address`: the local address the media uses (its only candidate peer to peer), or nil for every address.
    /// `relay`: the TURN server of its relayed candidate (everything through it when relay-only), or nil.
    init(certificate: DTLSCertificate, loop: EventLoop, address: String? = nil, relay: MediaRelay? = nil) throws {
        transport = try address.map { try ClientTransport(certificate: certificate, bindHost: $0, srtpProfiles: SRTPTransform.supportedProfiles) }
            ?? Self.openTransport(certificate: certificate)
        if let relay { transport.useRelay(relay.server, only: relay.only, now: sb_monotonic_ns()) }
        self.loop = loop
    }

    deinit { buffer.deallocate() }

    /// A transport on a socket bound to every address, dual-stack where the host has IPv6 (else IPv4 only), so that
    /// the kernel sends from whichever address routes to the server's candidate, loopback or not.
    private static func openTransport(certificate: DTLSCertificate) throws -> ClientTransport {
        do {
            return try ClientTransport(certificate: certificate, bindHost: "::", srtpProfiles: SRTPTransform.supportedProfiles)
        } catch {
            return try ClientTransport(certificate: certificate, bindHost: "0.0.0.0", srtpProfiles: SRTPTransform.supportedProfiles)
        }
    }

    func start() {
        loop.register(fd: transport.socket.fd, events: SB_EPOLLIN, handler: self)
        tick()
    }

    func close() {
        guard !closed else { return }
        closed = true
        transport.releaseRelay(now: sb_monotonic_ns())
        loop.unregister(fd: transport.socket.fd)
    }

    private func tick() {
        guard !closed else { return }
        let now = sb_monotonic_ns()
        if now &- lastHousekeeping >= 20_000_000 {
            lastHousekeeping = now
            transport.tick(now: now)
        }
        if transport.connected {
            sendAudio(now: now)
            sendVideo(now: now)
            if !incoming.isEmpty, now >= nextReport { sendReports(now: now) }
        }
        playOut(now: now)
        _ = loop.schedule(after: .milliseconds(4)) { [self] in tick() }
    }

    // MARK: Receive

    func handle(events: UInt32) {
        while !closed {
            let n = batch.receive(from: transport.socket)
            if n <= 0 { return }
            let now = sb_monotonic_ns()
            for i in 0..<n { process(batch.slot(i), length: Int(batch.lengths[i]), now: now, from: batch.source(i)) }
            if n < batch.capacity { return }
        }
    }

    private func process(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64, from: PeerAddress?) {
        switch transport.receive(p, length: length, now: now, from: from) {
        case .none: return
        case .rtcp(let protected): receiveRTCP(p, length: protected, now: now)
        case .rtp(let size): receiveRTP(p, length: size, now: now)
        }
    }

    private func receiveRTP(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64) {
        guard length >= 12 else { return }
        let first = Bytes.byte(p, 0)
        var offset = 12 + Int(first & 0x0F) * 4
        if first & 0x10 != 0 {
            guard length >= offset + 4 else { return }
            offset += 4 + Int(Bytes.u16(p, offset + 2)) * 4
        }
        var end = length
        if first & 0x20 != 0 { end -= Int(Bytes.byte(p, length - 1)) }
        guard end > offset else { return }
        let ssrc = Bytes.u32(p, 8)
        guard let index = incoming.firstIndex(where: { $0.ssrc == ssrc }) else { return }
        packetsReceived += 1
        incoming[index].statistics.received(sequence: Bytes.u16(p, 2), timestamp: Bytes.u32(p, 4), length: length, now: now)
        let marker = Bytes.byte(p, 1) & 0x80 != 0
        if incoming[index].video {
            let isVP8 = incoming[index].vp8PayloadType == Bytes.byte(p, 1) & 0x7F
            videoSink?.packet(payload: p + offset, length: end - offset, marker: marker, isVP8: isVP8)
            return
        }
        guard sink != nil, incoming[index].jitter != nil else { return }
        let sequence = Bytes.u16(p, 2)
        let timestamp = Bytes.u32(p, 4)
        _ = incoming[index].jitter?.insert(sequence: sequence, timestamp: timestamp,
                                           payload: UnsafeRawBufferPointer(start: p + offset, count: end - offset), arrival: sb_monotonic_ns())
    }

    /// Hands each received audio stream's next 20 ms to the sink when it is due: the packet the
    /// jitter buffer has for that moment, concealment (Opus FEC when the next packet is in) for a gap,
    /// nothing while the stream is idle or still filling.
    private func playOut(now: UInt64) {
        guard let sink else { return }
        for index in incoming.indices where incoming[index].jitter != nil {
            guard let decoder = incoming[index].decoder else { continue }
            if incoming[index].nextPlayout == 0 { incoming[index].nextPlayout = now }
            // Fallen far behind (a stalled loop): carry on from here rather than burst.
            if now &- incoming[index].nextPlayout > 200_000_000, now > incoming[index].nextPlayout { incoming[index].nextPlayout = now }
            while now >= incoming[index].nextPlayout {
                incoming[index].nextPlayout &+= 20_000_000
                guard let output = incoming[index].jitter?.pop(now: now) else { break }
                let played: Bool
                switch output {
                case .packet(_, _, let payload):
                    played = decode(payload, with: decoder)
                case .conceal(_, let next):
                    played = conceal(next, with: decoder)
                case .empty:
                    played = false
                }
                if played { sink.receive(frame, from: incoming[index].member) }
            }
        }
    }

    private func decode(_ payload: ArraySlice<UInt8>, with decoder: OpusCodec) -> Bool {
        payload.withUnsafeBytes { b -> Bool in
            do { try decoder.decode(b, into: &frame) } catch { return false }
            return true
        }
    }

    /// A lost frame: rebuilt from the next packet's FEC when it is here, else Opus concealment.
    private func conceal(_ next: ArraySlice<UInt8>?, with decoder: OpusCodec) -> Bool {
        guard let next else {
            do { try decoder.conceal(next: nil, into: &frame) } catch { return false }
            return true
        }
        return next.withUnsafeBytes { b -> Bool in
            do { try decoder.conceal(next: b, into: &frame) } catch { return false }
            return true
        }
    }

    /// PLI and FIR (RFC 4585 §6.3.1, RFC 5104 §4.3.1) restart a replayed recording at its key frame; a sender
    /// report of a received stream is echoed in the next receiver report (the server's round-trip time).
    private func receiveRTCP(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64) {
        guard !videoOut.isEmpty || !incoming.isEmpty, let size = transport.unprotectRTCP(p, length: length),
              let packets = try? RTCPPacket.parseCompound(UnsafeRawBufferPointer(start: p, count: size)) else { return }
        for packet in packets {
            switch packet {
            case .pictureLossIndication(let pli): requestKeyframe(pli.mediaSSRC)
            case .fullIntraRequest(let fir): for entry in fir.entries { requestKeyframe(entry.ssrc) }
            case .senderReport(let report):
                guard let index = incoming.firstIndex(where: { $0.ssrc == report.ssrc }) else { continue }
                incoming[index].statistics.senderReportReceived(compactNTP: report.compactNTP, now: now)
            default: continue
            }
        }
    }

    private func requestKeyframe(_ ssrc: UInt32) {
        for i in videoOut.indices where videoOut[i].ssrc == ssrc { videoOut[i].keyframeRequested = true }
    }

    /// Pauses the simulcast layers named (no subscriber takes them), and sends the others, a resumed one from a key frame.
    func setUnusedLayers(_ rids: Set<String>) {
        for i in videoOut.indices {
            guard let rid = videoOut[i].rid else { continue }
            let unused = rids.contains(rid)
            if videoOut[i].unused && !unused { videoOut[i].keyframeRequested = true }
            videoOut[i].unused = unused
        }
    }

    /// Packets sent of each simulcast layer, by RID.
    var layerPackets: [String: Int] {
        Dictionary(videoOut.compactMap { out in out.rid.map { ($0, out.packetsSent) } }, uniquingKeysWith: +)
    }

    /// A receiver report on every stream received (RFC 3550 §6.4.2): the loss, jitter and sender report echo the
    /// server judges this client's link by.
    private func sendReports(now: UInt64) {
        nextReport = now &+ Self.reportInterval / 2 &+ SystemRandom().next(UInt64.self) % Self.reportInterval
        var blocks: [ReportBlock] = []
        for index in incoming.indices where incoming[index].statistics.packets > 0 {
            blocks.append(incoming[index].statistics.reportBlock(ssrc: incoming[index].ssrc, now: now))
        }
        guard !blocks.isEmpty else { return }
        let report = RTCPPacket.receiverReport(ReceiverReport(ssrc: reportSSRC, reports: Array(blocks.prefix(31))))
        let cname = RTCPPacket.sourceDescription(SourceDescription(chunks: [.init(source: reportSSRC, items: [.init(type: .cname, text: "switchboard-sdk-\(reportSSRC)")])]))
        guard let bytes = try? RTCPPacket.serializeCompound([report, cname]) else { return }
        _ = transport.sendRTCP(bytes)
    }

    // MARK: Send

    private func sendAudio(now: UInt64) {
        guard var out = audioOut else { return }
        if out.nextSend == 0 { out.nextSend = now }
        while now >= out.nextSend {
            // Fallen far behind (a stalled loop): carry on from here rather than burst.
            if now - out.nextSend > 200_000_000 { out.nextSend = now }
            out.nextSend += 20_000_000
            if !out.source.read(into: &out.frame) { out.frame.clear() }
            let level = Self.audioLevel(out.frame)
            let p = buffer
            Bytes.setByte(p, 0, 0x90)  // V=2, X=1
            Bytes.setByte(p, 1, 111)
            Bytes.put16(p, 2, out.sequence)
            Bytes.put32(p, 4, out.timestamp)
            Bytes.put32(p, 8, out.ssrc)
            // RFC 8285 one-byte header extension: RFC 6464 audio level, voice activity above -50 dBov.
            Bytes.put16(p, 12, 0xBEDE)
            Bytes.put16(p, 14, 1)
            Bytes.setByte(p, 16, out.levelID << 4)
            Bytes.setByte(p, 17, (level < 50 ? 0x80 : 0) | level)
            Bytes.setByte(p, 18, 0)
            Bytes.setByte(p, 19, 0)
            if muted { out.frame.clear() }
            let payload = UnsafeMutableRawBufferPointer(start: p + 20, count: OpusCodec.maxPayload)
            if let n = try? out.codec.encode(out.frame, into: payload), transport.sendRTP(p, length: 20 + n, capacity: 2048) {
                packetsSent += 1
            }
            out.sequence &+= 1
            out.timestamp &+= 960
        }
        audioOut = out
    }

    /// RFC 6464 level: -dBov of the frame's RMS, 0 (loud) … 127 (silent).
    static func audioLevel(_ frame: AudioFrame) -> UInt8 {
        var energy = 0.0
        frame.withSamples { s in for v in s { energy += Double(v) * Double(v) } }
        let rms = (energy / Double(max(1, frame.count))).squareRoot()
        guard rms >= 1 else { return 127 }
        return UInt8(max(0, min(127, (-20 * log10(rms / 32768)).rounded())))
    }

    /// Stops the video (the publisher audio fallback), or sends it again from a key frame.
    func setVideoPaused(_ paused: Bool) {
        if videoPaused && !paused { for i in videoOut.indices { videoOut[i].keyframeRequested = true } }
        videoPaused = paused
    }

    private func sendVideo(now: UInt64) {
        guard !videoPaused else { return }
        for i in videoOut.indices where !videoOut[i].unused { sendVideo(&videoOut[i], now: now) }
    }

    /// A layer's RID in a one-byte header extension (RFC 8285) after the fixed header, padded to a word; returns
    /// where the payload starts (12 without one).
    private static func writeRID(_ rid: String?, _ p: UnsafeMutableRawPointer) -> Int {
        guard let rid else { return 12 }
        let count = rid.utf8.count
        let words = (1 + count + 3) / 4
        Bytes.put16(p, 12, 0xBEDE)
        Bytes.put16(p, 14, UInt16(words))
        Bytes.setByte(p, 16, ridExtensionID << 4 | UInt8(count - 1))
        for (k, c) in rid.utf8.enumerated() { Bytes.setByte(p, 17 + k, c) }
        for k in (17 + count)..<(16 + words * 4) { Bytes.setByte(p, k, 0) }
        return 16 + words * 4
    }

    private func sendVideo(_ out: inout VideoOut, now: UInt64) {
        let capture = out.capture
        if out.origin == 0 { out.origin = now; out.loopStart = now }
        if out.keyframeRequested {
            out.keyframeRequested = false
            out.frame = 0
            out.loopStart = now
        }
        while true {
            let frame = capture.frames[out.frame]
            let due = out.loopStart &+ frame.time
            guard now >= due else { break }
            if now - due > 200_000_000 { out.loopStart = now &- frame.time }
            out.timestamp = UInt32(truncatingIfNeeded: (out.loopStart &+ frame.time &- out.origin) / 100_000 * 9)
            for k in 0..<frame.packetCount {
                let packet = capture.packets[frame.firstPacket + k]
                let p = buffer
                let header = Self.writeRID(out.rid, p)
                Bytes.setByte(p, 0, header > 12 ? 0x90 : 0x80)
                Bytes.setByte(p, 1, (k == frame.packetCount - 1 ? 0x80 : 0) | 96)
                Bytes.put16(p, 2, out.sequence)
                Bytes.put32(p, 4, out.timestamp)
                Bytes.put32(p, 8, out.ssrc)
                capture.payloads.withUnsafeBytes { (p + header).copyMemory(from: $0.baseAddress! + packet.offset, byteCount: packet.length) }
                VP8Packetizer.stampPictureID(out.pictureID, in: p + header)
                if transport.sendRTP(p, length: header + packet.length, capacity: 2048) {
                    packetsSent += 1
                    out.packetsSent += 1
                }
                out.sequence &+= 1
            }
            out.pictureID = (out.pictureID &+ 1) & 0x7FFF
            out.frame += 1
            if out.frame == capture.frames.count {
                out.frame = 0
                out.loopStart &+= capture.duration
            }
        }
    }
}
