import CShims
import Crypto
import Media
import Runtime
import SRTP
import Synchronization
import Wire

/// The client role of the media stack, many peers at once, for `switchboard load`.
///
/// Peers are spread over a few event loops; each loop ticks every 2 ms; every 20 ms a publisher sends
/// one packet per audio stream and its share of video (synthetic, or a capture's due frames). Signaling is left
/// to the caller: this type builds offers/answers and applies the server's.
public final class LoadGenerator: Sendable {
    /// A peer, addressed by loop and position.
    public struct Peer: Sendable, Hashable {
        let loop: Int
        let index: Int
    }

    /// What a measured window produced, summed over all peers.
    public struct Report: Sendable {
        public var seconds: Double
        public var publishersSent: UInt64
        public var subscribersReceived: UInt64
        public var expected: Int64
        public var receivedInSequence: Int64
        public var latency: LatencyHistogram
        /// Packets missing from the subscribers' sequence ranges.
        public var lossFraction: Double {
            expected > 0 ? Double(max(0, expected - receivedInSequence)) / Double(expected) : 0
        }
    }

    private let loops: [EventLoop]
    private let states: [StateBox]
    let certificate: DTLSCertificate
    let bindHost: String
    /// SRTP profiles every peer offers or accepts, in its order of preference.
    let srtpProfiles: [SRTPProfile]
    /// Peers' sockets are read by polling each in turn instead of waiting in `epoll` (see `init`).
    let pollingReceivers: Bool

    /// Invariant: `state` is touched only by jobs running on its loop's thread.
    private struct StateBox: @unchecked Sendable { let state: LoopState }

    final class LoopState {
        var peers: [LoadPeer] = []
        var publishers: [LoadPeer] = []
        var ticking = false
        var ticks = 0
        /// Publishers send nothing while set (the rest of the tick, ICE and DTLS, goes on).
        var holding = false
    }

    /// `srtpProfiles` defaults to what the server itself offers (`SRTPTransform.supportedProfiles`).
    ///
    /// With `pollingReceivers` every loop reads each of its peers' sockets in turn, over and over, and never
    /// waits in `epoll`. Over loopback the server's send also runs the delivery into the receiving socket; with
    /// the socket in an `epoll` set that includes waking its waiters (on a VM, a third of a microsecond per
    /// datagram), which a server sending to remote clients never pays. Polled, a datagram costs the server
    /// what it costs `UDPSendFloor`'s sender, whose receivers poll the same way: the pairing for comparing a
    /// server with that floor. Each loop then keeps a whole CPU busy, so give it CPUs of its own.
    public init(threads: Int, bindHost: String = "127.0.0.1", srtpProfiles: [SRTPProfile]? = nil,
                pollingReceivers: Bool = false) throws {
        certificate = try DTLSCertificate()
        self.bindHost = bindHost
        self.srtpProfiles = srtpProfiles ?? SRTPTransform.supportedProfiles
        self.pollingReceivers = pollingReceivers
        var loops: [EventLoop] = []
        var states: [StateBox] = []
        for i in 0..<max(1, threads) {
            let loop = EventLoop(index: i)
            loop.startThread(name: "load-\(i)")
            loops.append(loop)
            states.append(StateBox(state: LoopState()))
        }
        self.loops = loops
        self.states = states
        self.next = Mutex(0)
    }

    private let next: Mutex<Int>

    /// Stops the peers' loops and waits for their threads to leave them, so the process can exit
    /// without a loop thread inside DTLS or SRTP while the C libraries' atexit handlers run.
    public func shutdown() {
        for loop in loops { loop.stop() }
        for loop in loops { loop.stopAndWait() }
    }

    func on<T: Sendable>(_ loop: Int, _ body: @escaping @Sendable (LoopState, EventLoop) throws -> T) async throws -> T {
        let box = states[loop]
        let eventLoop = loops[loop]
        return try await eventLoop.submit { try body(box.state, eventLoop) }
    }

    private func add(role: LoadPeer.Role) async throws -> (Peer, ICEParameters) {
        let loopIndex = next.withLock { n -> Int in
            defer { n += 1 }
            return n % loops.count
        }
        let certificate = certificate
        let bindHost = bindHost
        let profiles = srtpProfiles
        let polling = pollingReceivers
        return try await on(loopIndex) { state, loop in
            let peer = try LoadPeer(role: role, certificate: certificate, bindHost: bindHost, srtpProfiles: profiles)
            state.peers.append(peer)
            if role == .publisher { state.publishers.append(peer) }
            if !polling { loop.register(fd: peer.socket.fd, events: SB_EPOLLIN, handler: peer) }
            if !state.ticking {
                state.ticking = true
                LoadGenerator.tick(state, loop)
                if polling { LoadGenerator.poll(state, loop) }
            }
            return (Peer(loop: loopIndex, index: state.peers.count - 1), peer.local)
        }
    }

    private static func tick(_ state: LoopState, _ loop: EventLoop) {
        let now = sb_monotonic_ns()
        state.ticks &+= 1
        let housekeeping = state.ticks % 10 == 0
        if housekeeping { for peer in state.peers { peer.tick(now: now) } }
        for peer in state.publishers where !state.holding {
            peer.replayCaptures(now: now)
            if peer.nextSend == 0 { peer.nextSend = now + UInt64.random(in: 0..<20_000_000) }
            if now >= peer.nextSend {
                peer.sendMedia(now: now)
                peer.nextSend += 20_000_000
                if peer.nextSend < now { peer.nextSend = now + 20_000_000 }
            }
        }
        loop.schedule(after: .milliseconds(2)) { tick(state, loop) }
    }

    /// One pass over every peer's socket, then the next as soon as the loop has run its timers and jobs
    /// (a timer already due keeps the loop from sleeping).
    private static func poll(_ state: LoopState, _ loop: EventLoop) {
        for peer in state.peers { peer.handle(events: SB_EPOLLIN) }
        loop.schedule(after: .zero) { poll(state, loop) }
    }

    // MARK: Publishers

    /// A publisher and its SDP offer (Opus, plus VP8 when `video`).
    /// `videoKbps` sets the synthetic video bitrate (1100-byte payloads; default 880 kb/s);
    /// with a `capture`, the video is that recording replayed in real time instead.
    /// With `opus`, the audio stream is that real Opus loop (its bursts, when `burst` is given, timed
    /// on that clock for a mixed room's listeners) instead of filler, each packet with its RFC 6464 level
    /// as a browser sends it.
    public func makePublisher(video: Bool, videoKbps: Int = 880, capture: VideoCapture? = nil,
                              opus: OpusLoop? = nil, burst: BurstClock? = nil) async throws -> (Peer, offer: String) {
        let (peer, ice) = try await add(role: .publisher)
        let random = SystemRandom()
        var streams = [(kind: MediaKind.audio, ssrc: random.next(UInt32.self) | 1)]
        if video { streams.append((.video, random.next(UInt32.self) | 1)) }
        let offer = ClientSDP.offer(
            ice: ice, certificate: certificate, sessionID: random.next(UInt64.self) >> 1,
            streams: streams.map { ClientSDP.OutgoingStream(kind: $0.kind, ssrc: $0.ssrc, codec: $0.kind == .audio ? .opus : .vp8) },
            audioLevelID: opus != nil ? 1 : nil)
        // kb/s → hundredths of a 1100-byte packet per 20 ms tick.
        let rate = max(1, videoKbps * 1000 / 8 / 50 * 100 / 1100)
        let list = streams.map {
            LoadPeer.Stream(
                ssrc: $0.ssrc, payloadType: $0.kind == .audio ? 111 : 96, video: $0.kind == .video, videoRate: rate,
                capture: $0.kind == .video ? capture : nil,
                opus: $0.kind == .audio ? (burst != nil ? opus?.burst : opus?.quiet) : nil,
                audioLevelID: $0.kind == .audio && opus != nil ? 1 : nil,
                burst: $0.kind == .audio && opus != nil ? burst : nil)
        }
        try await on(peer.loop) { state, _ in state.peers[peer.index].streams = list }
        return (peer, offer)
    }

    /// Applies the server's answer and starts ICE.
    public func completePublisher(_ peer: Peer, answer: String) async throws {
        let remote = try ClientSDP.remote(answer)
        try await on(peer.loop) { state, _ in
            try state.peers[peer.index].configure(
                remote: remote.ice, server: remote.address, fingerprint: remote.fingerprint,
                dtlsRole: remote.setup == .active ? .server : .client)
        }
    }

    // MARK: Mixer participants

    /// A participant of a mixing server that is offered to (Janus's AudioBridge): one send-receive
    /// Opus m-line on one transport. With `opus` it speaks (that loop; its bursts on `burst`'s clock
    /// when `bursting`), without it it only listens; either way it counts what it hears and, with
    /// `burst`, measures latency per burst as a mixed room's listener does. The RFC 6464 extension is
    /// offered as id 1, as a browser would; a mix that comes back without it is decoded instead.
    public func makeParticipant(opus: OpusLoop?, burst: BurstClock?, bursting: Bool) async throws -> (Peer, offer: String) {
        let (peer, ice) = try await add(role: .publisher)
        let random = SystemRandom()
        let ssrc = random.next(UInt32.self) | 1
        let offer = ClientSDP.offer(
            ice: ice, certificate: certificate, sessionID: random.next(UInt64.self) >> 1,
            streams: [ClientSDP.OutgoingStream(kind: .audio, ssrc: ssrc, codec: .opus)], audioLevelID: 1, direction: .sendrecv)
        let list = opus.map {
            [LoadPeer.Stream(ssrc: ssrc, payloadType: 111, video: false, opus: bursting ? $0.burst : $0.quiet, audioLevelID: 1,
                             burst: bursting ? burst : nil)]
        } ?? []
        try await on(peer.loop) { state, _ in
            state.peers[peer.index].streams = list
            state.peers[peer.index].burst = burst
        }
        return (peer, offer)
    }

    // MARK: Subscribers

    /// A subscriber answering the server's offer; returns the answer to post. A mixed room's
    /// listener measures its latency on the bursts of `burst` (see `OpusLoop`).
    public func makeSubscriber(offer text: String, burst: BurstClock? = nil) async throws -> (Peer, answer: String) {
        let (peer, ice) = try await add(role: .subscriber)
        let remote = try ClientSDP.remote(text)
        let offer: SessionDescription
        do { offer = try SessionDescription.parse(text) } catch { throw MediaError.invalid("offer: \(error)") }
        let answer = ClientSDP.answer(to: offer, ice: ice, certificate: certificate, remoteSetup: remote.setup)
        try await on(peer.loop) { state, _ in
            try state.peers[peer.index].configure(
                remote: remote.ice, server: remote.address, fingerprint: remote.fingerprint,
                dtlsRole: remote.setup == .active ? .server : .client)
            state.peers[peer.index].burst = burst
        }
        return (peer, answer)
    }

    // MARK: Running

    /// Holds (or releases) every publisher's media: a caller that sets up many listeners holds it so
    /// the server's forwarding does not compete with their signaling, and releases it before measuring.
    public func holdMedia(_ hold: Bool) async {
        for i in loops.indices { _ = try? await on(i) { state, _ in state.holding = hold } }
    }

    /// Counts of connected and failed peers, the first failure, and where the first peer
    /// that is neither connected nor failed stands.
    public func connectionCounts() async -> (connected: Int, failed: Int, total: Int, failure: String?, stuck: String?) {
        var result: (connected: Int, failed: Int, total: Int, failure: String?, stuck: String?) = (0, 0, 0, nil, nil)
        for i in loops.indices {
            guard let part = try? await on(i, { state, _ in
                (state.peers.filter(\.connected).count, state.peers.filter(\.failed).count, state.peers.count,
                 state.peers.compactMap(\.failure).first, state.peers.first { !$0.connected && !$0.failed }?.progress)
            }) else { continue }
            result.connected += part.0
            result.failed += part.1
            result.total += part.2
            result.failure = result.failure ?? part.3
            result.stuck = result.stuck ?? part.4
        }
        return result
    }

    /// Starts a measured window (clears statistics).
    public func startMeasuring() async {
        let since = sb_monotonic_ns()
        for i in loops.indices {
            _ = try? await on(i) { state, _ in
                for peer in state.peers {
                    peer.resetStatistics()
                    peer.measuring = true
                    peer.measuringSince = since
                }
            }
        }
    }

    /// Ends the window and sums every peer's statistics.
    public func stopMeasuring(seconds: Double) async -> Report {
        var report = Report(seconds: seconds, publishersSent: 0, subscribersReceived: 0, expected: 0, receivedInSequence: 0, latency: LatencyHistogram())
        for i in loops.indices {
            let part = try? await on(i) { state, _ -> Report in
                var r = Report(seconds: seconds, publishersSent: 0, subscribersReceived: 0, expected: 0, receivedInSequence: 0, latency: LatencyHistogram())
                for peer in state.peers {
                    peer.measuring = false
                    r.publishersSent += peer.sent
                    r.subscribersReceived += peer.received
                    let (expected, received) = peer.expectedAndReceived
                    r.expected += expected
                    r.receivedInSequence += received
                    r.latency.merge(peer.histogram)
                }
                return r
            }
            guard let part else { continue }
            report.publishersSent += part.publishersSent
            report.subscribersReceived += part.subscribersReceived
            report.expected += part.expected
            report.receivedInSequence += part.receivedInSequence
            report.latency.merge(part.latency)
        }
        return report
    }
}
