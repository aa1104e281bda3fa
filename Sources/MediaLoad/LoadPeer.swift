import Audio
import CShims
import Crypto
import Glibc
import Media
import Runtime
import Wire

/// One synthetic WebRTC endpoint of the load generator: the client side of our own stack
/// (ICE controlling with USE-CANDIDATE, DTLS in whichever role the SDP gave it, SRTP),
/// on its own UDP socket so the server sees a distinct 5-tuple per peer.
///
/// A publisher sends Opus-sized (or video-sized) RTP whose payload starts with its send
/// time; a subscriber unprotects what arrives and records loss and one-way latency (the
/// generator and server share the host clock). Confined to its loop thread.
final class LoadPeer: Selectable {
    enum Role { case publisher, subscriber }

    struct Stream {
        var ssrc: UInt32
        var payloadType: UInt8
        var video: Bool
        var sequence: UInt16 = 0
        var timestamp: UInt32 = 0
        /// Video packets per 20 ms tick, in hundredths (200 = 2 packets: 880 kb/s of 1100-byte payloads).
        var videoRate = 200
        var credit = 0
        /// Replayed VP8 frames instead of synthetic video packets.
        var capture: VideoCapture?
        var replay = Replay()
        /// Real Opus packets sent in a loop instead of filler (audio), and where the loop is.
        var opus: [OpusLoop.Frame]?
        /// The negotiated id of the RFC 6464 audio level extension: each Opus packet carries its frame's level.
        var audioLevelID: UInt8?
        var opusFrame = 0
        /// Set on the publisher whose loop has bursts: each burst's start goes here for the listeners.
        var burst: BurstClock?
    }

    /// Where a stream is in its capture: the next frame, when the current loop started,
    /// and the media clock (RTP timestamps follow the frames' times across loops).
    struct Replay {
        var frame = 0
        var loopStart: UInt64 = 0
        var origin: UInt64 = 0
        var pictureID: UInt16 = 0
        /// Set by a PLI/FIR: start again from the capture's key frame.
        var keyframeRequested = false
    }

    /// Bytes of RTP padding that carry the send time (8 bytes, then the padding count).
    static let trailerLength = 9
    /// The RFC 8285 one-byte-header block holding one RFC 6464 level: 4 bytes of header, 4 of element and padding.
    static let audioLevelBlockLength = 8

    let role: Role
    /// ICE, DTLS and SRTP towards the server.
    let transport: ClientTransport
    var socket: UDPSocket { transport.socket }
    var local: ICEParameters { transport.local }
    private let batch = DatagramBatch(capacity: 32, stride: 2048)
    private let sendBuffer = UnsafeMutableRawPointer.allocate(byteCount: 2048, alignment: 16)
    var connected: Bool { transport.connected }
    var failed: Bool { transport.failed }
    var failure: String? { transport.failure }
    /// Publishers send on their own 20 ms phase, so a room's packets do not leave in one burst.
    var nextSend: UInt64 = 0
    var streams: [Stream] = []

    // Subscriber statistics, reset at the start of the measured window.
    private(set) var histogram = LatencyHistogram()
    private(set) var received: UInt64 = 0
    private(set) var sent: UInt64 = 0
    /// Per received SSRC: first and highest extended sequence number, and how many arrived. A
    /// subscriber has a handful of streams, so a short array searched in place beats hashing.
    private struct Received {
        var ssrc: UInt32
        var first: Int64 = 0
        var last: Int64 = 0
        var unwrapper = SequenceNumberUnwrapper()
        var count: Int64 = 0
    }
    private var receivedStreams: [Received] = []
    var measuring = false
    /// When the measured window began (monotonic ns): a burst that began before it is not measured, since its
    /// first loud packets may have come before the window and a later one would count as that burst arriving.
    var measuringSince: UInt64 = 0
    /// A mixed room's listener: latency is measured per burst (see `OpusLoop`), not per packet.
    var burst: BurstClock?
    private var lastBurst: UInt64 = 0
    /// When the first RTP packet arrived (monotonic ns; 0: none yet), measured or not.
    private(set) var firstMediaAt: UInt64 = 0

    init(role: Role, certificate: DTLSCertificate, bindHost: String, srtpProfiles: [SRTPProfile]) throws(Media.SocketError) {
        self.role = role
        // First DTLS retransmission after 50 ms rather than 500: join times measure the server, not a
        // ClientHello the server dropped because it came before its own ICE check succeeded.
        transport = try ClientTransport(
            certificate: certificate, bindHost: bindHost, srtpProfiles: srtpProfiles,
            dtlsRetransmission: .init(initialMilliseconds: 50, maximumMilliseconds: 8_000))
    }

    deinit { sendBuffer.deallocate() }

    /// Points the peer at the server's candidate and sets up DTLS.
    func configure(remote: ICEParameters, server: PeerAddress, fingerprint: DTLSFingerprintValue, dtlsRole: DTLSRole) throws {
        try transport.configure(remote: remote, server: server, fingerprint: fingerprint, dtlsRole: dtlsRole)
    }

    // MARK: Receive

    func handle(events: UInt32) {
        while true {
            let n = batch.receive(from: socket)
            if n <= 0 { return }
            let now = sb_monotonic_ns()
            for i in 0..<n { process(batch.slot(i), length: Int(batch.lengths[i]), now: now) }
            if n < batch.capacity { return }
        }
    }

    private func process(_ p: UnsafeMutableRawPointer, length: Int, now: UInt64) {
        let size: Int
        switch transport.receive(p, length: length, now: now) {
        case .none: return
        case .rtcp(let protected):
            if role == .publisher { receiveRTCP(p, length: protected) }
            return
        case .rtp(let plain): size = plain
        }
        if firstMediaAt == 0 { firstMediaAt = now }
        guard measuring, size >= 12 + 16 else { return }
        received &+= 1
        // The send time rides in the padding, which receivers discard (RFC 3550 §5.1).
        if Bytes.byte(p, 0) & 0x20 != 0, Int(Bytes.byte(p, size - 1)) >= LoadPeer.trailerLength {
            let sentAt = Bytes.u64(p, size - LoadPeer.trailerLength)
            if sentAt > 0, now > sentAt { histogram.record(now - sentAt) }
        } else if let burst {
            // A mix: the first loud packet after a burst began is that burst arriving.
            let sentAt = burst.sentAt.load(ordering: .relaxed)
            if sentAt != lastBurst, sentAt >= measuringSince, sentAt > 0, now > sentAt,
               let level = mixLevel(UnsafeRawBufferPointer(start: p, count: size)), level <= OpusLoop.loudLevel {
                lastBurst = sentAt
                histogram.record(now - sentAt)
            }
        }
        let ssrc = Bytes.u32(p, 8)
        let index = receivedStreams.firstIndex { $0.ssrc == ssrc } ?? {
            receivedStreams.append(Received(ssrc: ssrc))
            return receivedStreams.count - 1
        }()
        receivedStreams.withUnsafeMutableBufferPointer { streams in
            let extended = streams[index].unwrapper.unwrap(Bytes.u16(p, 2))
            if streams[index].count == 0 { streams[index].first = extended; streams[index].last = extended }
            streams[index].last = max(streams[index].last, extended)
            streams[index].count += 1
        }
    }

    /// Decodes a mix that carries no level of its own (only while a burst is awaited).
    private var levelDecoder: OpusCodec?
    private var levelFrame = AudioFrame(rate: .hz16000)

    /// A mixed packet's RFC 6464 level: its audio level extension (id 1), or else the level of its
    /// Opus payload decoded (a mixer that does not stamp its mix).
    private func mixLevel(_ packet: UnsafeRawBufferPointer) -> UInt8? {
        guard let view = try? RTPView(packet) else { return nil }
        if let level = view.audioLevel(id: 1, in: packet) { return level.level }
        if levelDecoder == nil {
            levelDecoder = try? OpusCodec({
                var c = OpusCodec.Configuration()
                c.sampleRate = .hz16000
                return c
            }())
        }
        guard let decoder = levelDecoder else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: packet[view.payloadRange])
        do { try decoder.decode(payload, into: &levelFrame) } catch { return nil }
        return AudioLevel.level(levelFrame)
    }

    /// A publisher honours PLI and FIR (RFC 4585 §6.3.1, RFC 5104 §4.3.1) on replayed video by
    /// going back to the capture's key frame, as an encoder would make a new one.
    private func receiveRTCP(_ p: UnsafeMutableRawPointer, length: Int) {
        guard let size = transport.unprotectRTCP(p, length: length),
              let packets = try? RTCPPacket.parseCompound(UnsafeRawBufferPointer(start: p, count: size)) else { return }
        for packet in packets {
            let media: UInt32
            switch packet {
            case .pictureLossIndication(let pli): media = pli.mediaSSRC
            case .fullIntraRequest(let fir): media = fir.entries.first?.ssrc ?? 0
            default: continue
            }
            for i in streams.indices where streams[i].ssrc == media && streams[i].capture != nil {
                streams[i].replay.keyframeRequested = true
            }
        }
    }

    // MARK: Timers

    /// ICE checks until connected, consent every 5 s after; DTLS retransmissions.
    func tick(now: UInt64) { transport.tick(now: now) }

    /// Sends one 20 ms tick of media on every synthetic stream: a 160-byte payload (Opus at
    /// 64 kb/s) or the tick's share of 1100-byte video packets (each may start a VP8 key
    /// frame). Every packet carries its send time.
    func sendMedia(now: UInt64) {
        guard connected else { return }
        for i in streams.indices where streams[i].capture == nil {
            if let opus = streams[i].opus {
                // Real Opus, padded to the filler's size (160 bytes with the send time) when shorter.
                let k = streams[i].opusFrame
                streams[i].opusFrame = (k + 1) % opus.count
                if k == 0, let burst = streams[i].burst { burst.sentAt.store(now, ordering: .relaxed) }
                let packet = opus[k].payload
                var header = RTPView.fixedHeaderLength
                if let id = streams[i].audioLevelID {
                    // A one-byte-header extension block with the level, as a browser sends (V bit clear).
                    let block = sendBuffer + header
                    Bytes.put16(block, 0, 0xBEDE)
                    Bytes.put16(block, 2, 1)
                    Bytes.put32(block, 4, UInt32(id & 0x0F) << 28 | UInt32(opus[k].level & 0x7F) << 16)
                    header += LoadPeer.audioLevelBlockLength
                }
                let payload = sendBuffer + header
                packet.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
                let extra = max(0, 160 - LoadPeer.trailerLength - packet.count - (header - RTPView.fixedHeaderLength))
                sendPacket(&streams[i], headerLength: header, payloadLength: packet.count, marker: false, now: now, extraPadding: extra)
                streams[i].timestamp &+= 960
                continue
            }
            var count = 1
            if streams[i].video {
                streams[i].credit += streams[i].videoRate
                count = streams[i].credit / 100
                streams[i].credit -= count * 100
            }
            for _ in 0..<count {
                let video = streams[i].video
                let size = video ? 1100 : 160
                let payload = sendBuffer + RTPView.fixedHeaderLength
                payload.initializeMemory(as: UInt8.self, repeating: 0x55, count: size)
                if video {
                    Bytes.setByte(payload, 0, 0x10)  // S=1, PID=0
                    Bytes.setByte(payload, 1, 0x00)  // P=0: every packet may start a key frame
                }
                sendPacket(&streams[i], payloadLength: size - LoadPeer.trailerLength, marker: video, now: now)
                streams[i].timestamp &+= video ? 1500 : 960
            }
        }
    }

    /// Sends the frames of replayed captures that are due (called every loop tick, so frames
    /// leave on their own times rather than on the 20 ms audio tick).
    func replayCaptures(now: UInt64) {
        guard connected else { return }
        for i in streams.indices {
            if let capture = streams[i].capture { replay(capture, stream: &streams[i], now: now) }
        }
    }

    /// Sends one capture's frames that are due, restarting at its key frame when asked.
    private func replay(_ capture: VideoCapture, stream: inout Stream, now: UInt64) {
        if stream.replay.origin == 0 { stream.replay.origin = now; stream.replay.loopStart = now }
        if stream.replay.keyframeRequested {
            stream.replay.keyframeRequested = false
            stream.replay.frame = 0
            stream.replay.loopStart = now
        }
        while true {
            let frame = capture.frames[stream.replay.frame]
            let due = stream.replay.loopStart &+ frame.time
            guard now >= due else { return }
            // Fallen far behind (a stalled loop): carry on from here rather than burst.
            if now - due > 200_000_000 { stream.replay.loopStart = now &- frame.time }
            // 90 kHz media clock: 9 ticks per 100 µs.
            stream.timestamp = UInt32(truncatingIfNeeded: (stream.replay.loopStart &+ frame.time &- stream.replay.origin) / 100_000 * 9)
            for k in 0..<frame.packetCount {
                let packet = capture.packets[frame.firstPacket + k]
                let payload = sendBuffer + RTPView.fixedHeaderLength
                capture.payloads.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress! + packet.offset, byteCount: packet.length) }
                VP8Packetizer.stampPictureID(stream.replay.pictureID, in: payload)
                sendPacket(&stream, payloadLength: packet.length, marker: k == frame.packetCount - 1, now: now)
            }
            stream.replay.pictureID = (stream.replay.pictureID &+ 1) & 0x7FFF
            stream.replay.frame += 1
            if stream.replay.frame == capture.frames.count {
                stream.replay.frame = 0
                stream.replay.loopStart &+= capture.duration
            }
        }
    }

    /// Writes the RTP header in front of the payload (and extension block, `headerLength` past 12) already in
    /// `sendBuffer`, appends the
    /// send-time padding, protects and sends; advances the stream's sequence number.
    private func sendPacket(_ stream: inout Stream, headerLength: Int = RTPView.fixedHeaderLength, payloadLength: Int, marker: Bool,
                            now: UInt64, extraPadding: Int = 0) {
        guard transport.connected else { return }
        let p = sendBuffer
        Bytes.setByte(p, 0, headerLength > RTPView.fixedHeaderLength ? 0xB0 : 0xA0)  // V=2, P=1, X when extended
        Bytes.setByte(p, 1, (marker ? 0x80 : 0) | stream.payloadType)
        Bytes.put16(p, 2, stream.sequence)
        Bytes.put32(p, 4, stream.timestamp)
        Bytes.put32(p, 8, stream.ssrc)
        var end = headerLength + payloadLength
        if extraPadding > 0 {
            (p + end).initializeMemory(as: UInt8.self, repeating: 0, count: extraPadding)
            end += extraPadding
        }
        Bytes.put64(p, end, now)
        Bytes.setByte(p, end + 8, UInt8(LoadPeer.trailerLength + extraPadding))
        guard transport.sendRTP(p, length: end + LoadPeer.trailerLength, capacity: 2048) else { return }
        if measuring { sent &+= 1 }
        stream.sequence &+= 1
    }

    /// Where a peer that is not connected got stuck, for the generator's error message.
    var progress: String {
        "\(role) on \(transport.progress)"
    }

    /// Expected packets (from sequence ranges) and received ones, for loss.
    var expectedAndReceived: (expected: Int64, received: Int64) {
        var expected: Int64 = 0
        var got: Int64 = 0
        for entry in receivedStreams {
            expected += entry.last - entry.first + 1
            got += entry.count
        }
        return (expected, got)
    }

    /// Before the first window nothing was recorded, so only a later window needs a new histogram: 160 KB per
    /// peer, which for a thousand peers would hold the loop (and the publishers' sends on it) for tens of ms
    /// just as the window opens.
    func resetStatistics() {
        if histogram.count > 0 { histogram = LatencyHistogram() }
        received = 0
        sent = 0
        receivedStreams.removeAll()
    }
}
