import Audio
import CShims
import Crypto
import Glibc
import Runtime
import SRTP

/// One plain-RTP audio leg (RFC 3550, RFC 3551): an RTP/RTCP port pair from the configured range,
/// the negotiated codec (PCMU, PCMA or Opus from the Audio target), RFC 4733 telephone events both
/// ways, symmetric RTP, and basic RTCP sender/receiver reports.
///
/// Audio crosses the leg as 20 ms mono frames at the codec's rate (8 kHz for G.711, 48 kHz for
/// Opus): `onAudio` gets each decoded frame, `send(_:)` takes one frame to encode and send. The
/// caller paces sending (a mixer tick); frames arrive as packets do (no jitter buffer here).
///
/// Symmetric RTP (RFC 4961): media goes to where the peer's packets really come from, not only to
/// the SDP address, so a phone behind NAT is heard and hears us. The leg latches to the first
/// source that sends a packet of a negotiated payload type, and again when a new SSRC appears.
///
/// SRTP (SDES-keyed, `negotiated.srtp`): what arrives is authenticated and decrypted before anything
/// else looks at it (a forged packet neither plays nor moves the latch), what leaves is protected last.
/// DTLS-SRTP (`negotiated.dtls`): each port of the pair runs a DTLS handshake (datagrams whose first byte
/// is 20–63, RFC 7983) and is keyed by it; until its port is keyed, nothing is sent and what arrives is
/// dropped. The handshakes allocate; once keyed, the packet path is the same as SDES's. With RTCP
/// multiplexing (`negotiated.rtcpMux`, RFC 5761) RTCP comes and goes on the RTP port (told apart by its
/// packet type), and one handshake keys both.
///
/// Confined to its loop (the SIP edge's loop, or any `EventLoop`): every method runs there, which is what
/// makes the unchecked Sendable conformance sound (it only lets the leg be handed to its loop). The
/// packet path (`handle(events:)`, `send(_:)`) allocates nothing, takes no lock and logs nothing.
public final class RTPLeg: Selectable, @unchecked Sendable {
    public private(set) unowned var loop: EventLoop
    public let port: UInt16
    public private(set) var negotiated: NegotiatedAudio
    public private(set) var statistics = RTPLegStatistics()
    /// Decoded 20 ms frames, on the loop.
    public var onAudio: ((UnsafeBufferPointer<Int16>) -> Void)?
    /// DTMF digits received as RFC 4733 events (reported once, at the event's end).
    public var onDigit: ((Character) -> Void)?
    /// A DTLS-SRTP handshake failed (the peer's certificate does not match its fingerprint, it answered with
    /// something else, or not at all): that port will never be keyed. On the loop, once per port.
    public var onDTLSFailure: ((DTLSFailure) -> Void)?
    /// PCM rate of the frames in and out.
    public var sampleRate: Int { frame.rate.rawValue }

    private let pool: RTPPortPool
    private let rtpFD: Int32
    private let rtcpFD: Int32
    private var rtcp: RTCPSocketHandler?
    private var codec: any Codec
    /// SRTP and SRTCP, both ways, when the session is keyed (SDES: one key for both; DTLS: each port's own).
    private var srtpIn: SRTPTransform?
    private var srtpOut: SRTPTransform?
    private var srtcpIn: SRTPTransform?
    private var srtcpOut: SRTPTransform?
    /// The DTLS-SRTP handshakes of the RTP and RTCP ports.
    private var dtls: (rtp: DTLSEngine?, rtcp: DTLSEngine?) = (nil, nil)
    private var dtlsTimer: TimerHandle?
    /// A ClientHello that came before there was a handshake for it — before the answer configured the leg (a peer
    /// that starts as soon as it answers), or on a keyed port before a re-INVITE's new fingerprint reached the leg:
    /// the newest on each port, fed to its handshake once there is one if it is recent (`earlyLife`), instead of
    /// waiting for its resend.
    private var early: (rtp: EarlyHello?, rtcp: EarlyHello?) = (nil, nil)
    private typealias EarlyHello = (datagram: [UInt8], from: IPEndpoint, at: UInt64)
    private static let earlyLife: UInt64 = 5_000_000_000
    /// The session is known (`configure` ran): until then nothing is sent or decoded.
    public private(set) var configured = false
    private var frame: AudioFrame
    private let receiveBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 2048, alignment: 8)
    private let sendBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 1500, alignment: 8)
    private var remote = IPEndpoint(storage: sockaddr_storage(), length: 0)
    private var remoteRTCP = IPEndpoint(storage: sockaddr_storage(), length: 0)
    /// AF_INET or AF_INET6, by the address the leg binds; an IPv6 leg sends to IPv4 peers v4-mapped.
    private let family: Int32
    private var latchedSSRC: UInt32?
    private var ssrc: UInt32
    private var sequence: UInt16
    private var timestamp: UInt32
    private var lastReceivedSequence: UInt16?
    private var lastEventTimestamp: UInt32?
    private var remoteSSRC: UInt32 = 0
    private var dtmf: (code: UInt8, timestamp: UInt32, sent: Int, packets: Int, endsLeft: Int)?
    private var pendingDigits: [UInt8] = []
    /// In `pendingDigits`: a 500 ms pause (`p`), not an event.
    private static let pause: UInt8 = 0xFF
    private var pausing = false
    private var dtmfTimer: TimerHandle?
    private var reportTimer: TimerHandle?
    private var closed = false

    /// Binds an even port and the odd one above from `pool` on `host`; `negotiated` from the SDP
    /// offer/answer says where to send, which codec and which payload types.
    public convenience init(loop: EventLoop, pool: RTPPortPool, host: String, negotiated: NegotiatedAudio,
                            ssrc: UInt32 = UInt32.random(in: 1...UInt32.max)) throws(RTPLegError) {
        try self.init(loop: loop, pool: pool, host: host, ssrc: ssrc)
        do { try configure(negotiated) } catch {
            close()
            throw error
        }
    }

    /// Binds the port pair before the session is known (an outbound offer needs our port first);
    /// the leg neither sends nor receives until `configure` gives it the peer's answer.
    public init(loop: EventLoop, pool: RTPPortPool, host: String, ssrc: UInt32 = UInt32.random(in: 1...UInt32.max)) throws(RTPLegError) {
        self.loop = loop
        self.pool = pool
        self.ssrc = ssrc
        negotiated = NegotiatedAudio(remoteAddress: "0.0.0.0", remotePort: 9, codec: .pcmu, payloadType: 0, telephoneEventPayloadType: nil,
                                     ptime: 20, direction: .inactive)
        sequence = UInt16(truncatingIfNeeded: ssrc >> 7)
        timestamp = ssrc &* 2_654_435_761
        codec = G711Codec(.muLaw)
        frame = AudioFrame(rate: .hz8000)
        var fds: (Int32, Int32) = (-1, -1)
        family = IPEndpoint.family(of: host) ?? AF_INET
        guard let port = pool.acquire({ port in
            guard let a = Self.bind(host: host, port: port) else { return false }
            guard let b = Self.bind(host: host, port: port + 1) else { Glibc.close(a); return false }
            fds = (a, b)
            return true
        }) else {
            receiveBuffer.deallocate()
            sendBuffer.deallocate()
            throw .noFreePort
        }
        self.port = port
        (rtpFD, rtcpFD) = fds
        loop.register(fd: rtpFD, events: SB_EPOLLIN, handler: self)
        let handler = RTCPSocketHandler { [unowned self] in self.readRTCP() }
        rtcp = handler
        loop.register(fd: rtcpFD, events: SB_EPOLLIN, handler: handler)
        scheduleReport()
    }

    /// Sets the session from the offer/answer: the peer's address, the codec and payload types.
    public func configure(_ negotiated: NegotiatedAudio) throws(RTPLegError) {
        let codec: any Codec
        switch negotiated.codec {
        case .pcmu: codec = G711Codec(.muLaw)
        case .pcma: codec = G711Codec(.aLaw)
        case .opus:
            do { codec = try OpusCodec() } catch { throw .codec("\(error)") }
        case .telephoneEvent: throw .codec("telephone-event is not a voice codec")
        }
        guard let remote = IPEndpoint(host: negotiated.remoteAddress, port: negotiated.remotePort, family: family),
              let remoteRTCP = IPEndpoint(host: negotiated.remoteAddress, port: negotiated.remotePort &+ 1, family: family) else {
            throw .badAddress(negotiated.remoteAddress)
        }
        // The same keys again (a re-offer that changed the codec): the SRTP contexts and DTLS association stay.
        let rekey = !configured || negotiated.srtp != self.negotiated.srtp || negotiated.dtls != self.negotiated.dtls
            || negotiated.rtcpMux != self.negotiated.rtcpMux
        if rekey {
            let transforms = try negotiated.srtp?.transforms()
            (srtpIn, srtpOut) = (transforms?.inbound, transforms?.outbound)
            (srtcpIn, srtcpOut) = (srtpIn, srtpOut)
            try makeHandshakes(negotiated.dtls, rtcpMux: negotiated.rtcpMux)
        }
        self.codec = codec
        self.negotiated = negotiated
        self.remote = remote
        self.remoteRTCP = remoteRTCP
        latchedSSRC = nil
        frame = AudioFrame(rate: codec.sampleRate)
        configured = true
        if rekey { beginHandshakes() }
    }

    /// New DTLS handshakes for `keying` (none without it); until they are done nothing is keyed.
    private func makeHandshakes(_ keying: DTLSKeying?, rtcpMux: Bool) throws(RTPLegError) {
        dtls = (nil, nil)
        loop.cancel(dtlsTimer)
        dtlsTimer = nil
        guard let keying else { return }
        (srtpIn, srtpOut, srtcpIn, srtcpOut) = (nil, nil, nil, nil)
        do {
            dtls = (try keying.engine(), rtcpMux ? nil : try keying.engine())
        } catch {
            throw .srtp("\(error)")
        }
    }

    /// Starts the handshakes as the client, each port's ClientHello going where the SDP says that port's peer is;
    /// as the server, answers a ClientHello that came before them.
    private func beginHandshakes() {
        if negotiated.dtls?.role == .client {
            let now = sb_monotonic_ns()
            if let rtp = dtls.rtp { sendDTLS(rtp.start(now: now), on: rtpFD, to: remote) }
            if let rtcp = dtls.rtcp { sendDTLS(rtcp.start(now: now), on: rtcpFD, to: remoteRTCP) }
            scheduleDTLSTimer()
        } else {
            let now = sb_monotonic_ns()
            for (port, hello, fd) in [(dtls.rtp, early.rtp, rtpFD), (dtls.rtcp, early.rtcp, rtcpFD)] {
                guard let port, let hello, now &- hello.at < Self.earlyLife else { continue }
                hello.datagram.withUnsafeBytes { receiveDTLS($0, port: port, on: fd, from: hello.from) }
            }
        }
        early = (nil, nil)
    }

    deinit {
        receiveBuffer.deallocate()
        sendBuffer.deallocate()
    }

    /// Stops the leg: sockets closed, the port pair back in the pool.
    public func close() {
        guard !closed else { return }
        closed = true
        loop.cancel(dtmfTimer)
        loop.cancel(reportTimer)
        loop.cancel(dtlsTimer)
        loop.unregister(fd: rtpFD)
        loop.unregister(fd: rtcpFD)
        Glibc.close(rtpFD)
        Glibc.close(rtcpFD)
        rtcp = nil
        pool.release(port)
        // The handlers capture their owners (a call's leg, its line): kept, they would keep them alive.
        onAudio = nil
        onDigit = nil
        onDTLSFailure = nil
    }

    /// Stops using this loop, sockets kept open (packets wait in them): call on the leg's loop, then
    /// `attach(to:)` on the next one. How a call's audio moves to another conversation's mixer.
    public func detach() {
        guard !closed else { return }
        loop.cancel(dtmfTimer)
        loop.cancel(reportTimer)
        loop.cancel(dtlsTimer)
        dtmf = nil
        loop.unregister(fd: rtpFD)
        loop.unregister(fd: rtcpFD)
    }

    /// Runs on `loop` from now on: call on that loop, after `detach()` on the old one.
    public func attach(to loop: EventLoop) {
        guard !closed else { return }
        self.loop = loop
        loop.register(fd: rtpFD, events: SB_EPOLLIN, handler: self)
        if let rtcp { loop.register(fd: rtcpFD, events: SB_EPOLLIN, handler: rtcp) }
        scheduleReport()
        scheduleDTLSTimer()
    }

    /// A re-INVITE changed the session (same codec): new remote address, direction or SRTP keys; with DTLS-SRTP,
    /// a new fingerprint from the peer is a new association (RFC 5763 §5): new handshakes, our role as it was.
    public func update(_ negotiated: NegotiatedAudio) {
        if let keying = negotiated.srtp, keying != self.negotiated.srtp, let transforms = try? keying.transforms() {
            (srtpIn, srtpOut) = (transforms.inbound, transforms.outbound)
            (srtcpIn, srtcpOut) = (srtpIn, srtpOut)
            self.negotiated.srtp = keying
        }
        if negotiated.remoteAddress != self.negotiated.remoteAddress || negotiated.remotePort != self.negotiated.remotePort {
            if let r = IPEndpoint(host: negotiated.remoteAddress, port: negotiated.remotePort, family: family) { remote = r }
            if let r = IPEndpoint(host: negotiated.remoteAddress, port: negotiated.remotePort &+ 1, family: family) { remoteRTCP = r }
            latchedSSRC = nil
        }
        self.negotiated.direction = negotiated.direction
        self.negotiated.remoteAddress = negotiated.remoteAddress
        self.negotiated.remotePort = negotiated.remotePort
        self.negotiated.payloadType = negotiated.payloadType
        self.negotiated.telephoneEventPayloadType = negotiated.telephoneEventPayloadType
        if let keying = negotiated.dtls, let was = self.negotiated.dtls, keying.remote != was.remote {
            let renewed = DTLSKeying(role: was.role, remote: keying.remote)
            do { try makeHandshakes(renewed, rtcpMux: self.negotiated.rtcpMux) } catch {
                statistics.dtlsFailures += 1
                onDTLSFailure?(.handshakeFailed(detail: "\(error)"))
                return
            }
            self.negotiated.dtls = renewed
            beginHandshakes()
        }
    }

    // MARK: Receive

    public func handle(events: UInt32) {
        for _ in 0..<64 {
            guard let (n, from) = IPEndpoint.receive(fd: rtpFD, into: receiveBuffer), n > 0 else { return }
            if tookDTLS(n, from: from, rtcp: false) { continue }
            if negotiated.rtcpMux, Self.isRTCP(receiveBuffer) {
                receivedRTCP(n)
                continue
            }
            var length = n
            if negotiated.dtls != nil, srtpIn == nil {  // not keyed yet
                statistics.packetsDropped += 1
                continue
            }
            if let srtpIn, !srtpIn.unprotectRTP(receiveBuffer.baseAddress!, length: &length) {
                statistics.srtpFailures += 1
                continue
            }
            receive(UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<length]), from: from)
        }
    }

    private func receive(_ packet: UnsafeRawBufferPointer, from source: IPEndpoint) {
        // RFC 3550 §5.1: version 2, then CSRCs and an optional extension before the payload.
        guard packet.count >= 12, packet[0] >> 6 == 2 else { statistics.packetsDropped += 1; return }
        let csrcCount = Int(packet[0] & 0x0F)
        var offset = 12 + 4 * csrcCount
        if packet[0] & 0x10 != 0 {
            guard packet.count >= offset + 4 else { statistics.packetsDropped += 1; return }
            offset += 4 + 4 * (Int(packet[offset + 2]) << 8 | Int(packet[offset + 3]))
        }
        var end = packet.count
        if packet[0] & 0x20 != 0, end > offset { end -= Int(packet[end - 1]) }
        guard end > offset else { statistics.packetsDropped += 1; return }
        let payloadType = packet[1] & 0x7F
        let seq = UInt16(packet[2]) << 8 | UInt16(packet[3])
        let ts = UInt32(packet[4]) << 24 | UInt32(packet[5]) << 16 | UInt32(packet[6]) << 8 | UInt32(packet[7])
        let senderSSRC = UInt32(packet[8]) << 24 | UInt32(packet[9]) << 16 | UInt32(packet[10]) << 8 | UInt32(packet[11])
        let isVoice = payloadType == negotiated.payloadType
        let isEvent = payloadType == negotiated.telephoneEventPayloadType
        guard isVoice || isEvent else { statistics.packetsDropped += 1; return }
        if latchedSSRC != senderSSRC, !IPEndpoint.same(source, remote) || latchedSSRC == nil {
            remote = source
            remoteRTCP = source
            remoteRTCP.port = source.port &+ 1
            statistics.latches += 1
        }
        latchedSSRC = senderSSRC
        remoteSSRC = senderSSRC
        statistics.packetsReceived += 1
        if let last = lastReceivedSequence {
            let gap = seq &- last
            if gap > 1 && gap < 3000 { statistics.packetsLost += Int(gap - 1) }
            if gap == 0 || gap >= 0x8000 { return }  // duplicate or late
        }
        lastReceivedSequence = seq
        guard negotiated.receives else { return }
        let payload = UnsafeRawBufferPointer(rebasing: packet[offset..<end])
        if isEvent {
            guard let event = TelephoneEvent(payload) else { statistics.packetsDropped += 1; return }
            // The end packet is sent three times (RFC 4733 §2.5.1.4): report the event once.
            if event.end, lastEventTimestamp != ts {
                lastEventTimestamp = ts
                statistics.eventsReceived += 1
                if let digit = TelephoneEvent.digit(of: event.event) { onDigit?(digit) }
            }
            return
        }
        do {
            try codec.decode(payload, into: &frame)
        } catch {
            statistics.packetsDropped += 1
            return
        }
        statistics.framesDecoded += 1
        if let onAudio { frame.withSamples { onAudio($0) } }
    }

    // MARK: Send

    /// Encodes and sends one 20 ms frame of `sampleRate` PCM; dropped while a DTMF event is playing
    /// (RFC 4733 §2.5.1.3: the event replaces the audio) or while we hold the peer.
    public func send(_ samples: UnsafeBufferPointer<Int16>) {
        let step = UInt32(codec.clockRate / 50)
        defer { timestamp &+= step }
        guard !closed, negotiated.sends, dtmf == nil, samples.count == frame.count else { return }
        frame.withMutableSamples { _ = $0.update(fromContentsOf: samples) }
        let payload = UnsafeMutableRawBufferPointer(rebasing: sendBuffer[12...])
        let n: Int
        do { n = try codec.encode(frame, into: payload) } catch { return }
        writeHeader(payloadType: negotiated.payloadType, marker: false, timestamp: timestamp)
        transmit(12 + n)
    }

    /// Queues a DTMF digit as RFC 4733 events: a packet every 20 ms with a growing duration, the
    /// last three with the end bit; `p` waits `KeyPacing.pauseMilliseconds` before the next. Unknown characters are ignored.
    public func sendDigit(_ digit: Character, milliseconds: Int = KeyPacing.keyMilliseconds) {
        guard let code = digit == "p" || digit == "P" ? Self.pause : TelephoneEvent.code(of: digit), negotiated.telephoneEventPayloadType != nil,
              pendingDigits.count < 64 else { return }
        pendingDigits.append(code)
        if dtmf == nil && !pausing { startNextDigit(milliseconds: milliseconds) }
    }

    private func startNextDigit(milliseconds: Int) {
        pausing = false
        guard !pendingDigits.isEmpty else { return }
        let code = pendingDigits.removeFirst()
        if code == Self.pause {
            pausing = true
            dtmfTimer = loop.schedule(after: .milliseconds(KeyPacing.pauseMilliseconds)) { [weak self] in self?.startNextDigit(milliseconds: milliseconds) }
            return
        }
        dtmf = (code, timestamp, 0, max(2, milliseconds / 20), 3)
        dtmfTick(milliseconds: milliseconds)
    }

    private func dtmfTick(milliseconds: Int) {
        guard !closed, var event = dtmf, let pt = negotiated.telephoneEventPayloadType else { return }
        event.sent += 1
        let ending = event.sent >= event.packets
        let duration = UInt16(clamping: event.sent * 160)
        TelephoneEvent(event: event.code, end: ending, duration: duration)
            .write(to: UnsafeMutableRawBufferPointer(rebasing: sendBuffer[12..<16]))
        writeHeader(payloadType: pt, marker: event.sent == 1, timestamp: event.timestamp)
        transmit(16)
        if ending {
            event.endsLeft -= 1
            event.sent -= 1  // the end packet repeats with the same duration
            if event.endsLeft == 0 {
                dtmf = nil
                // The event took its duration of media time; the next one starts after it (a new timestamp).
                timestamp &+= UInt32(event.packets) * UInt32(codec.clockRate / 50)
                // A gap before the next digit, so the far end sees two key presses.
                dtmfTimer = loop.schedule(after: .milliseconds(KeyPacing.gapMilliseconds)) { [weak self] in self?.startNextDigit(milliseconds: milliseconds) }
                return
            }
        }
        dtmf = event
        dtmfTimer = loop.schedule(after: .milliseconds(20)) { [weak self] in self?.dtmfTick(milliseconds: milliseconds) }
    }

    private func writeHeader(payloadType: UInt8, marker: Bool, timestamp ts: UInt32) {
        sendBuffer[0] = 0x80
        sendBuffer[1] = (marker ? 0x80 : 0) | payloadType
        sendBuffer[2] = UInt8(sequence >> 8)
        sendBuffer[3] = UInt8(sequence & 0xFF)
        for i in 0..<4 {
            sendBuffer[4 + i] = UInt8(truncatingIfNeeded: ts >> (24 - 8 * i))
            sendBuffer[8 + i] = UInt8(truncatingIfNeeded: ssrc >> (24 - 8 * i))
        }
        sequence &+= 1
    }

    private func transmit(_ count: Int) {
        var length = count
        if negotiated.dtls != nil, srtpOut == nil { return }  // not keyed yet: nothing goes out in the clear
        if let srtpOut, !srtpOut.protectRTP(sendBuffer.baseAddress!, length: &length, capacity: sendBuffer.count) { return }
        let sent = remote.withSockAddr { sendto(rtpFD, sendBuffer.baseAddress, length, 0, $0, $1) }
        if sent == length {
            statistics.packetsSent += 1
            statistics.octetsSent += count - 12
        }
    }

    // MARK: RTCP

    private func readRTCP() {
        for _ in 0..<16 {
            guard let (n, from) = IPEndpoint.receive(fd: rtcpFD, into: receiveBuffer), n > 0 else { return }
            if tookDTLS(n, from: from, rtcp: true) { continue }
            receivedRTCP(n)
        }
    }

    /// The `n` bytes in the receive buffer are an (S)RTCP packet, from either port.
    private func receivedRTCP(_ n: Int) {
        var n = n
        if negotiated.dtls != nil, srtcpIn == nil { return }  // not keyed yet
        if let srtcpIn, !srtcpIn.unprotectRTCP(receiveBuffer.baseAddress!, length: &n) {
            statistics.srtpFailures += 1
            return
        }
        // SR (200) or RR (201) at the head of a compound packet (RFC 3550 §6.1).
        if n >= 8, receiveBuffer[0] >> 6 == 2, receiveBuffer[1] == 200 || receiveBuffer[1] == 201 { statistics.rtcpReceived += 1 }
    }

    /// RFC 5761 §4: on a multiplexed port, a second byte of 192–223 is an RTCP packet type (RTP payload types
    /// stay below 64, or 192 with the marker bit).
    static func isRTCP(_ packet: UnsafeMutableRawBufferPointer) -> Bool { packet.count >= 2 && (192...223).contains(packet[1]) }

    private func scheduleReport() {
        reportTimer = loop.schedule(after: .seconds(5)) { [weak self] in
            guard let self, !self.closed else { return }
            self.sendReport()
            self.scheduleReport()
        }
    }

    /// A sender report when we have sent, else a receiver report; one report block about the peer.
    func sendReport() {
        let buffer = sendBuffer
        let sender = statistics.packetsSent > 0
        let headerWords = sender ? 6 : 1
        let blocks = remoteSSRC != 0 ? 1 : 0
        let length = 4 * (1 + headerWords + 6 * blocks)
        func put32(_ v: UInt32, _ at: Int) { for i in 0..<4 { buffer[at + i] = UInt8(truncatingIfNeeded: v >> (24 - 8 * i)) } }
        buffer[0] = 0x80 | UInt8(blocks)
        buffer[1] = sender ? 200 : 201
        buffer[2] = UInt8((length / 4 - 1) >> 8)
        buffer[3] = UInt8((length / 4 - 1) & 0xFF)
        put32(ssrc, 4)
        var at = 8
        if sender {
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            put32(UInt32(truncatingIfNeeded: Int(now.tv_sec) + 2_208_988_800), 8)
            put32(UInt32(truncatingIfNeeded: (UInt64(now.tv_nsec) << 32) / 1_000_000_000), 12)
            put32(timestamp, 16)
            put32(UInt32(truncatingIfNeeded: statistics.packetsSent), 20)
            put32(UInt32(truncatingIfNeeded: statistics.octetsSent), 24)
            at = 28
        }
        if blocks == 1 {
            put32(remoteSSRC, at)
            let lost = UInt32(clamping: statistics.packetsLost) & 0x00FF_FFFF
            put32(lost, at + 4)
            put32(UInt32(lastReceivedSequence ?? 0), at + 8)
            put32(0, at + 12)
            put32(0, at + 16)
            put32(0, at + 20)
        }
        var size = length
        if negotiated.dtls != nil, srtcpOut == nil { return }  // not keyed yet
        if let srtcpOut, !srtcpOut.protectRTCP(buffer.baseAddress!, length: &size, capacity: buffer.count) { return }
        let sent = negotiated.rtcpMux ? remote.withSockAddr { sendto(rtpFD, buffer.baseAddress, size, 0, $0, $1) }
            : remoteRTCP.withSockAddr { sendto(rtcpFD, buffer.baseAddress, size, 0, $0, $1) }
        if sent == size { statistics.rtcpSent += 1 }
    }

    // MARK: DTLS-SRTP

    /// RFC 7983: a first byte of 20–63 is DTLS.
    static func isDTLS(_ first: UInt8) -> Bool { (20...63).contains(first) }

    /// Whether the `n` bytes just received on the RTP or RTCP port are DTLS for this leg: fed to that port's
    /// handshake, or (before the answer configured the leg) kept for it.
    private func tookDTLS(_ n: Int, from source: IPEndpoint, rtcp: Bool) -> Bool {
        let port = rtcp ? dtls.rtcp : dtls.rtp
        guard Self.isDTLS(receiveBuffer[0]), port != nil || !configured else { return false }
        let datagram = UnsafeRawBufferPointer(rebasing: receiveBuffer[0..<n])
        // Kept for a handshake to come: before there is one, or, on a keyed port, a new association's first flight
        // (a re-INVITE brought a new fingerprint and its update is on its way; the keyed handshake would drop it).
        if let port, !(port.state == .connected && Self.isClientHello(datagram)) {
            receiveDTLS(datagram, port: port, on: rtcp ? rtcpFD : rtpFD, from: source)
        } else if rtcp {
            early.rtcp = (Array(datagram), source, sb_monotonic_ns())
        } else {
            early.rtp = (Array(datagram), source, sb_monotonic_ns())
        }
        return true
    }

    /// A datagram that opens a DTLS handshake: a handshake record of epoch 0 carrying a ClientHello (RFC 6347 §4.1, §4.2.2).
    static func isClientHello(_ datagram: UnsafeRawBufferPointer) -> Bool {
        datagram.count > 13 && datagram[0] == 22 && datagram[3] == 0 && datagram[4] == 0 && datagram[13] == 1
    }

    /// A DTLS datagram on one port: answered to where it came from; once the handshake is done, the port is keyed.
    private func receiveDTLS(_ datagram: UnsafeRawBufferPointer, port: DTLSEngine, on fd: Int32, from source: IPEndpoint) {
        let output = port.receive(datagram, now: sb_monotonic_ns())
        sendDTLS(output.datagrams, on: fd, to: source)
        if let change = output.stateChange { handshake(of: port, became: change) }
        scheduleDTLSTimer()
    }

    private func handshake(of port: DTLSEngine, became state: DTLSState) {
        let isRTP = port === dtls.rtp
        switch state {
        case .connected:
            guard let profile = port.srtpProfile, let keys = port.srtpKeys,
                  let transforms = try? SDESKeying(profile: profile, local: keys.localKey + keys.localSalt,
                                                   remote: keys.remoteKey + keys.remoteSalt).transforms() else {
                statistics.dtlsFailures += 1
                onDTLSFailure?(.keyExportFailed)
                return
            }
            // The engine stays: a peer whose last flight went unanswered sends it again, and hears back.
            if isRTP {
                (srtpIn, srtpOut) = (transforms.inbound, transforms.outbound)
                if negotiated.rtcpMux { (srtcpIn, srtcpOut) = (srtpIn, srtpOut) }  // one handshake keys both
            } else {
                (srtcpIn, srtcpOut) = (transforms.inbound, transforms.outbound)
            }
            statistics.dtlsHandshakes += 1
        case .failed(let failure):
            statistics.dtlsFailures += 1
            onDTLSFailure?(failure)
        default:
            break
        }
    }

    private func sendDTLS(_ datagrams: [[UInt8]], on fd: Int32, to peer: IPEndpoint) {
        for datagram in datagrams {
            _ = datagram.withUnsafeBytes { bytes in peer.withSockAddr { sendto(fd, bytes.baseAddress, bytes.count, 0, $0, $1) } }
        }
    }

    /// Retransmits a handshake flight when its timer runs out (the earlier of the two ports').
    private func scheduleDTLSTimer() {
        loop.cancel(dtlsTimer)
        dtlsTimer = nil
        let deadlines = [dtls.rtp?.nextTimeout(), dtls.rtcp?.nextTimeout()].compactMap { $0 }
        guard !closed, let next = deadlines.min() else { return }
        let now = sb_monotonic_ns()
        dtlsTimer = loop.schedule(after: .nanoseconds(Int64(next > now ? next - now : 0))) { [weak self] in
            guard let self, !self.closed else { return }
            let now = sb_monotonic_ns()
            for (port, fd, peer) in [(self.dtls.rtp, self.rtpFD, self.remote), (self.dtls.rtcp, self.rtcpFD, self.remoteRTCP)] {
                guard let port else { continue }
                let output = port.handleTimeout(now: now)
                self.sendDTLS(output.datagrams, on: fd, to: peer)
                if let change = output.stateChange { self.handshake(of: port, became: change) }
            }
            self.scheduleDTLSTimer()
        }
    }

    // MARK: Sockets

    /// A UDP socket bound to `host:port` (IPv4 or IPv6 by the address), nil when it cannot bind.
    static func bind(host: String, port: UInt16) -> Int32? {
        IPEndpoint.boundSocket(type: Int32(SOCK_DGRAM.rawValue), host: host, port: port, flags: SB_SOCK_NONBLOCK | SB_SOCK_CLOEXEC)?.fd
    }
}

/// The RTCP socket's readiness, forwarded to its leg.
final class RTCPSocketHandler: Selectable {
    let onReadable: () -> Void
    init(_ onReadable: @escaping () -> Void) { self.onReadable = onReadable }
    func handle(events: UInt32) { onReadable() }
}
