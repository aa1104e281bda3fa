import Crypto
import Foundation
import Live
import Platform
import Runtime
import Synchronization
import Telephony
import Wire

/// What a video session's SIP calls need of the telephony edge: the edge, RTP ports, the address in SDP.
struct VideoSIPEdge: Sendable {
    let edge: SIPEdge
    let pool: RTPPortPool
    let host: String
    /// `--rtp-timeout` in nanoseconds: an answered call that sends nothing this long is hung up.
    let silenceLimit: UInt64
}

/// SIP interconnect: `POST /v2/project/{id}/dial` calls a SIP URI and brings the call into a video session
/// as a connection of its own with an audio-only stream. The call hears the mix of the session's streams
/// (or of the ones named) and the session hears the call, through the session's audio mix (the Audio
/// Connector's). The connection joins and its stream is published when the INVITE goes out (the reply
/// names both); the far end's audio flows once it answers. A call that fails, or that the far end hangs up,
/// leaves the session; a force disconnect of its connection hangs it up. `play-dtmf` sends RFC 4733 keys.
extension VideoRoutes {
    struct SIPDialRequest {
        var sessionID: String
        var token: String
        var uri: SIPURI
        /// The From: a user, or `user@host`.
        var from: String
        var headers: [(String, String)]
        var credentials: TrunkConfig.Credentials?
        var observeForceMute = false
        /// SRTP with SDES keys, required of the far end.
        var secure = false
        var streams: [String]?

        /// Headers the server writes itself (and their compact forms): an application's would break the call.
        static let reserved: Set<String> = [
            "via", "v", "from", "f", "to", "t", "call-id", "i", "cseq", "max-forwards", "contact", "m", "allow", "supported", "k",
            "require", "proxy-require", "user-agent", "content-type", "c", "content-length", "l", "content-encoding", "e", "route",
            "record-route", "authorization", "proxy-authorization", "rseq", "rack", "expires", "session-expires", "x",
        ]
        static let headerLimit = 32
        static let valueLimit = 1024

        init(_ body: JSONValue) throws(APIError) {
            guard let sessionID = body["sessionId"]?.stringValue, !sessionID.isEmpty else { throw .badRequest("sessionId is required.") }
            guard let token = body["token"]?.stringValue, !token.isEmpty else { throw .badRequest("token is required.") }
            guard let sip = body["sip"]?.objectValue else { throw .badRequest("sip must be an object with a uri.") }
            guard let uri = sip["uri"]?.stringValue.flatMap(SIPURI.dialable) else {
                throw .badRequest("sip.uri must be a sip: or sips: URI (transport udp, tcp or tls).")
            }
            self.sessionID = sessionID
            self.token = token
            self.uri = uri
            from = "switchboard"
            if let value = sip["from"] {
                guard let f = value.stringValue, Self.isFrom(f) else {
                    throw .badRequest("sip.from must be a SIP user or user@host.")
                }
                from = f
            }
            headers = []
            if let value = sip["headers"] {
                guard let fields = value.objectValue, fields.count <= Self.headerLimit else {
                    throw .badRequest("sip.headers must be an object of at most \(Self.headerLimit) headers.")
                }
                for (name, v) in fields.sorted(by: { $0.key < $1.key }) {
                    guard SIPHeaders.isValid(name: name, value: ""), !Self.reserved.contains(name.lowercased()) else {
                        throw .badRequest("sip.headers: \(name) is not a header an application may set (a SIP token, not one the server writes).")
                    }
                    guard let s = v.stringValue, s.utf8.count <= Self.valueLimit, SIPHeaders.isValid(name: name, value: s) else {
                        throw .badRequest("sip.headers.\(name) must be one line of text, at most \(Self.valueLimit) bytes.")
                    }
                    headers.append((name, s))
                }
            }
            if let value = sip["auth"] {
                guard let auth = value.objectValue, let user = auth["username"]?.stringValue, !user.isEmpty,
                      let password = auth["password"]?.stringValue else {
                    throw .badRequest("sip.auth must be an object with a username and a password.")
                }
                credentials = .init(username: user, password: password)
            }
            switch sip["video"] {
            case nil, .bool(false)?: break
            case .bool(true)?: throw .badRequest("sip.video: video is not available on SIP calls here; the call carries audio.", code: "unsupported-option")
            default: throw .badRequest("sip.video must be a boolean.")
            }
            switch sip["secure"] {
            case nil, .bool(false)?: break
            case .bool(true)?:
                // SDES keys travel in the INVITE: only over TLS are they not the network's to read.
                guard uri.isTLS else {
                    throw .badRequest("sip.secure needs a sips: URI or ;transport=tls: the SRTP keys travel in the SIP messages.")
                }
                secure = true
            default: throw .badRequest("sip.secure must be a boolean.")
            }
            switch sip["observeForceMute"] {
            case nil: break
            case .bool(let on)?: observeForceMute = on
            default: throw .badRequest("sip.observeForceMute must be a boolean.")
            }
            streams = try (sip["streams"] ?? body["streams"]).map { list throws(APIError) in try VideoRoutes.streamList(list, field: "sip.streams") }
        }

        /// A From user (or `user@host`): up to 256 characters, none of them space, control, `<`, `>`, `"` or `;`.
        static func isFrom(_ s: String) -> Bool {
            (1...256).contains(s.utf8.count) && !s.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7F || "<>\";".unicodeScalars.contains($0) }
                && s.split(separator: "@", omittingEmptySubsequences: false).count <= 2 && !s.hasPrefix("@") && !s.hasSuffix("@")
        }
    }

    /// SIP calls in video sessions, by connection id, for `play-dtmf`.
    static let sipCalls = Mutex<[String: VideoSIPCall]>([:])

    func registerSIPDial(on router: inout Router) {
        let (core, hub, sip) = (self.core, self.hub, self.sip)
        Metrics.shared.gauge("switchboard_video_sip_calls", help: "SIP calls in video sessions.") {
            Double(Self.sipCalls.withLock { $0.count })
        }
        router.post("/v2/project/:pid/dial") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let ask = try SIPDialRequest(try req.json())
            let grant = try Self.serverConnectionGrant(core: core, hub: hub, project: project, sessionID: ask.sessionID, token: ask.token,
                                                       streams: ask.streams, unknownSession: .notFound("sessionId is not a session of this project."),
                                                       relayed: "Only routed sessions are allowed to initiate SIP calls.")
            guard let sip else { throw APIError.unavailable("This server runs no SIP edge (--sip-port 0): it cannot place SIP calls.") }
            // Resolved before anything joins: a name that does not resolve is the caller's error.
            let addresses: [String]
            do {
                addresses = try await NameResolver.shared.addresses(of: ask.uri.hostPort.host, port: 0).map(\.host)
            } catch {
                throw APIError.badRequest("sip.uri: \(error)", code: "sip-unreachable")
            }
            let call = try await VideoSIPCall.start(ask, addresses: addresses, grant: grant, hub: hub, sip: sip)
            return .jsonObject(["id": call.id, "connectionId": call.connectionID, "streamId": call.streamID])
        }
        router.post("/v2/project/:pid/session/:sid/play-dtmf") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let digits = try Self.dtmfDigits(try req.json())
            guard let session = try core.videoSessions.get(id: req.parameter("sid"), project: project) else {
                throw APIError.notFound("No session with this id.")
            }
            let calls = Self.sipCalls.withLock { $0.values.filter { $0.sessionID == session.id } }
            for call in calls { call.send(digits: digits) }
            return HTTPResponse(status: 200)
        }
        router.post("/v2/project/:pid/session/:sid/connection/:cid/play-dtmf") { req in
            let (_, project) = try Self.projectCredentials(req, core: core, project: req.parameter("pid"))
            let digits = try Self.dtmfDigits(try req.json())
            guard let session = try core.videoSessions.get(id: req.parameter("sid"), project: project) else {
                throw APIError.notFound("No session with this id.")
            }
            guard let call = Self.sipCalls.withLock({ $0[req.parameter("cid")] }), call.sessionID == session.id else {
                throw APIError.notFound("No SIP call has this connection id in the session.")
            }
            call.send(digits: digits)
            return HTTPResponse(status: 200)
        }
    }

    /// `{"digits": …}`: 1 to 64 of 0-9, *, #, and p (a 500 ms pause).
    static func dtmfDigits(_ body: JSONValue) throws(APIError) -> String {
        guard let digits = body["digits"]?.stringValue, (1...64).contains(digits.count),
              digits.allSatisfy({ "0123456789*#p".contains($0) }) else {
            throw .badRequest("digits must be 1 to 64 of 0-9, *, # and p.")
        }
        return digits
    }
}

/// One SIP call in a video session: its line in the session's mix, the call on the edge, and its end.
final class VideoSIPCall: Sendable {
    let id = UUID4.generate()
    let sessionID: String
    let connectionID: String
    let streamID: String
    private let line: Mutex<PhoneLine?>
    private let silenceLimit: UInt64

    private init(sessionID: String, connectionID: String, streamID: String, line: PhoneLine?, silenceLimit: UInt64) {
        self.sessionID = sessionID
        self.connectionID = connectionID
        self.streamID = streamID
        self.line = Mutex(line)
        self.silenceLimit = silenceLimit
    }

    /// Clients of SIP calls: ids apart from the WebSockets' (which count up from 1).
    private static let clients = Atomic<UInt64>(0)
    private static func nextClient() -> ClientID { ClientID(rawValue: 1 << 63 | clients.add(1, ordering: .relaxed).newValue) }

    /// Joins the session with a phone line in its mix, then sends the INVITE; returns once it is sent.
    static func start(_ ask: VideoRoutes.SIPDialRequest, addresses: [String], grant: VideoGrant, hub: VideoHub,
                      sip: VideoSIPEdge) async throws -> VideoSIPCall {
        let made = Mutex<PhoneLine?>(nil)
        let hangup = Mutex<OutboundCall?>(nil)
        let ended = Mutex(false)
        let joined: (connection: VideoHub.Connection, streamID: String?)
        do {
            joined = try await hub.connectAudio(client: Self.nextClient(), grant: grant, streams: ask.streams,
                                                bidirectional: true, observesForceMute: ask.observeForceMute) { loop in
                let line = try PhoneLine(loop: loop, pool: sip.pool, host: sip.host, negotiated: nil)
                // Leaving the mix (a force disconnect, the session's media closing) ends the call.
                line.onClose = {
                    ended.withLock { $0 = true }
                    hangup.withLock { $0 }?.hangup()
                }
                made.withLock { $0 = line }
                return line
            }
        } catch {
            throw APIError.unavailable("The session's audio could not be mixed: \(error)")
        }
        guard let line = made.withLock({ $0 }), let streamID = joined.streamID else {
            throw APIError.unavailable("The SIP call's line was not made.")
        }
        let connection = joined.connection
        let call = VideoSIPCall(sessionID: connection.sessionID, connectionID: connection.id, streamID: streamID, line: line,
                                silenceLimit: sip.silenceLimit)
        let offered = AudioSessionConfig(address: sip.host, port: line.leg.port, encryption: ask.secure ? .srtp : .none)
        let offer = PlainRTPNegotiator.offer(offered, sessionID: UInt64(line.leg.port), version: 1)
        let placed: OutboundCall
        do {
            placed = try await sip.edge.callURI(ask.uri, at: addresses, from: ask.from, headers: ask.headers, credentials: ask.credentials, sdp: offer)
        } catch {
            hub.disconnect(sessionID: connection.sessionID, connectionID: connection.id, reason: .clientDisconnected)
            throw APIError.badRequest("sip.uri: the call could not be placed: \(error)", code: "sip-unreachable")
        }
        // A force disconnect while the INVITE was being sent: withdraw it now.
        let gone = hangup.withLock { h in
            h = placed
            return ended.withLock { $0 }
        }
        if gone { placed.hangup() }
        VideoRoutes.sipCalls.withLock { $0[connection.id] = call }
        Task { await call.follow(placed, offered: offered, hub: hub) }
        return call
    }

    /// The call's progress: its answer configures the line; its end takes the connection out of the session.
    private func follow(_ placed: OutboundCall, offered: AudioSessionConfig, hub: VideoHub) async {
        for await event in placed.events {
            switch event {
            case .connected(_, let answer):
                // Answered without the SRTP keys a secure call requires: no audio in the clear, the call ends.
                if let answer, !configure(answer, offered: offered) {
                    placed.hangup()
                    continue
                }
                // Answered: a far end gone silent past `--rtp-timeout` is hung up (its end takes the connection out).
                if silenceLimit > 0, let line = line.withLock({ $0 }) {
                    line.loop.execute { line.watchSilence(limit: self.silenceLimit) { placed.hangup() } }
                }
            case .progress(_, _, let answer?):
                _ = configure(answer, offered: offered)
            case .updated(_, let offer):
                // The far end's re-offer (hold, resume, new keys): the line follows it, keyed as before unless it changed them.
                if let line = line.withLock({ $0 }) { line.loop.execute { line.reoffered(offer) } }
            case .ended:
                _ = VideoRoutes.sipCalls.withLock { $0.removeValue(forKey: connectionID) }
                line.withLock { $0 = nil }
                hub.disconnect(sessionID: sessionID, connectionID: connectionID, reason: .clientDisconnected)
            default:
                break
            }
        }
        _ = VideoRoutes.sipCalls.withLock { $0.removeValue(forKey: connectionID) }
    }

    /// Sets the line from the answer; false when it cannot be used (no common codec, no usable SRTP keys).
    private func configure(_ answer: SessionDescription, offered: AudioSessionConfig) -> Bool {
        guard let line = line.withLock({ $0 }) else { return true }
        guard let negotiated = try? PlainRTPNegotiator.negotiated(answer: answer, offered: offered) else { return false }
        line.loop.execute { try? line.configure(negotiated) }
        return true
    }

    /// RFC 4733 keys to the far end, once the call has its audio.
    func send(digits: String) {
        guard let line = line.withLock({ $0 }) else { return }
        line.loop.execute { for d in digits { line.leg.sendDigit(d) } }
    }
}
