import Foundation
import Runtime
import Synchronization
import Wire

/// A logged-in connection to a Switchboard server: one WebSocket to `/v1/realtime`
/// (docs/protocol.md) that carries requests and answers, pushes every event of the user's
/// conversations, and comes back by itself after a network blip with `session:resume`, so no
/// event is lost or delivered twice.
///
/// ```swift
/// let session = try await Session.connect(to: URL(string: "http://127.0.0.1:8080")!, token: jwt)
/// for await event in session.events() { print(event.type) }
/// ```
public final class Session: Sendable {
    /// How a session connects, waits and reconnects.
    public struct Options: Sendable {
        /// How long a request waits for its answer (and for a connection, while reconnecting).
        public var requestTimeout: Duration = .seconds(10)
        /// Reconnect after the socket drops (with `session:resume`); off: the session ends instead.
        public var reconnect = true
        public var backoff = Backoff()
        /// A `session:ping` this often; no `session:pong` within `heartbeatTimeout` drops the socket.
        public var heartbeatInterval: Duration = .seconds(20)
        public var heartbeatTimeout: Duration = .seconds(10)
        /// Called for a new token when the session cannot continue with the current one (it
        /// expired, or the server forgot the session and the token is refused).
        public var tokenProvider: (@Sendable () async throws -> String)?
        /// A CA file for `https`/`wss` servers with a private CA (the development CA).
        public var caFile: String?
        /// `.relay`: conversation media (rooms, calls) goes only through the first TURN server over UDP of the
        /// login's `iceServers`, as a browser told `iceTransportPolicy: "relay"` does.
        public var iceTransportPolicy: ICETransportPolicy = .all
        public init() {}
    }

    /// The server's base URL (`http://host:port`).
    public let server: URL
    public let options: Options
    let realtimeURL: String

    struct State {
        var socket: WebSocket?
        /// Which socket is current; callbacks of older ones are ignored.
        var generation = 0
        var authenticated = false
        var sessionID: String?
        var user: UserInfo?
        var iceServers: [ICEServer] = []
        var token: String
        var nextRequest = 1
        var pending: [String: CheckedContinuation<JSONValue, any Error>] = [:]
        var seen = EventDeduplicator()
        var eventStreams: [Int: AsyncStream<ConversationEvent>.Continuation] = [:]
        var pushStreams: [Int: (prefix: String, continuation: AsyncStream<JSONValue>.Continuation)] = [:]
        var callStreams: [Int: AsyncStream<CallInput>.Continuation] = [:]
        var stateStreams: [Int: AsyncStream<ConnectionState>.Continuation] = [:]
        var nextStream = 0
        var ended: SessionError?
        var lastState: ConnectionState?
        /// The error the server pushed before closing (`session:error` without rid).
        var pushedError: SessionError?
        var reconnecting = false
        var lastPong = ContinuousClock.now
    }

    let state: Mutex<State>
    /// The session's own calls (placed, answered, being hung up here), for every call event stream.
    let voiceLedger = Mutex(VoiceLedger())
    private let heartbeat = Mutex<Task<Void, Never>?>(nil)

    init(server: URL, token: String, options: Options) throws(SessionError) {
        guard var parts = URLComponents(url: server, resolvingAgainstBaseURL: false),
              let scheme = parts.scheme?.lowercased(), ["http", "https", "ws", "wss"].contains(scheme) else {
            throw .unreachable("not an http(s) URL: \(server)")
        }
        let secure = scheme == "https" || scheme == "wss"
        parts.scheme = secure ? "https" : "http"
        parts.path = ""
        parts.query = nil
        guard let base = parts.url else { throw .unreachable("not a usable URL: \(server)") }
        self.server = base
        parts.scheme = secure ? "wss" : "ws"
        parts.path = "/v1/realtime"
        realtimeURL = parts.url?.absoluteString ?? ""
        self.options = options
        state = Mutex(State(token: token))
    }

    /// Connects and logs in with a user JWT.
    /// - Throws: `.invalidToken`, `.tokenExpired`, `.forbidden`, or `.unreachable`.
    public static func connect(to server: URL, token: String, options: Options = Options()) async throws(SessionError) -> Session {
        let session = try Session(server: server, token: token, options: options)
        do {
            try await session.open()
            let body = try await session.request("session:login", ["token": .string(token)])
            session.loggedIn(body, resumed: false, replayed: 0)
        } catch {
            session.shutdown(.closed, notify: false)
            throw error
        }
        session.startHeartbeat()
        return session
    }

    // MARK: Public surface

    /// The logged-in user.
    public var user: UserInfo { state.withLock { $0.user } ?? UserInfo(id: "", name: "") }
    /// The STUN and TURN servers for this session's peer connections, from its login (empty unless the operator
    /// set some); for an app whose own WebRTC stack carries a conversation's media.
    public var iceServers: [ICEServer] { state.withLock { $0.iceServers } }
    /// The server's id for this session (what `session:resume` continues).
    public var sessionID: String? { state.withLock { $0.sessionID } }
    /// The token requests and REST calls use now.
    public var token: String { state.withLock { $0.token } }
    /// The last event id processed per conversation.
    public var lastEventIDs: [String: Int] { state.withLock { $0.seen.lastIDs } }

    /// Every event of every conversation the user is in, from now on, in order, each once.
    /// Each call makes a new stream; every stream gets every event.
    public func events() -> AsyncStream<ConversationEvent> {
        let (stream, continuation) = AsyncStream<ConversationEvent>.makeStream(bufferingPolicy: .unbounded)
        register(continuation) { s, id in s.eventStreams[id] = continuation } remove: { s, id in s.eventStreams[id] = nil }
        return stream
    }

    /// Connection changes: connected (again), reconnecting and why, disconnected and why.
    public func states() -> AsyncStream<ConnectionState> {
        let (stream, continuation) = AsyncStream<ConnectionState>.makeStream(bufferingPolicy: .unbounded)
        register(continuation) { s, id in s.stateStreams[id] = continuation } remove: { s, id in s.stateStreams[id] = nil }
        return stream
    }

    /// Pushed messages whose type starts with `prefix` (`rtc:offer`, `video:`…), as JSON.
    func pushes(prefix: String) -> AsyncStream<JSONValue> {
        let (stream, continuation) = AsyncStream<JSONValue>.makeStream(bufferingPolicy: .unbounded)
        register(continuation) { s, id in s.pushStreams[id] = (prefix, continuation) } remove: { s, id in s.pushStreams[id] = nil }
        return stream
    }

    /// What a call's events are made from, `call:*` pushes and conversation events, in the order the socket
    /// delivered them (a call moved into another conversation is pushed before its old member leaves).
    enum CallInput: Sendable {
        case push(JSONValue)
        case event(ConversationEvent)
    }

    func callInputs() -> AsyncStream<CallInput> {
        let (stream, continuation) = AsyncStream<CallInput>.makeStream(bufferingPolicy: .unbounded)
        register(continuation) { s, id in s.callStreams[id] = continuation } remove: { s, id in s.callStreams[id] = nil }
        return stream
    }

    private func register<T>(_ continuation: AsyncStream<T>.Continuation, add: (inout State, Int) -> Void,
                             remove: @escaping @Sendable (inout State, Int) -> Void) {
        let ended = state.withLock { s -> Int? in
            let id = s.nextStream
            s.nextStream += 1
            if s.ended == nil { add(&s, id) }
            return s.ended == nil ? id : nil
        }
        guard let id = ended else {
            continuation.finish()
            return
        }
        continuation.removeOnTermination { [weak self] in self?.state.withLock { remove(&$0, id) } }
    }

    /// Replaces the session's token before it expires (`session:refresh`).
    public func refresh(token: String) async throws(SessionError) {
        _ = try await request("session:refresh", ["token": .string(token)])
        state.withLock { $0.token = token }
    }

    /// Ends the session at the server (it cannot be resumed) and closes the socket.
    public func logout() async {
        if state.withLock({ $0.authenticated && $0.ended == nil }) {
            _ = try? await request("session:logout", [:], timeout: .seconds(3))
        }
        shutdown(.closed, notify: true)
    }

    /// Sends a realtime request and returns the answer's body.
    @discardableResult
    public func request(_ type: String, _ body: [String: JSONValue], timeout: Duration? = nil) async throws(SessionError) -> JSONValue {
        let timeout = timeout ?? options.requestTimeout
        let deadline = ContinuousClock.now + timeout
        // While reconnecting, wait for the new socket rather than failing at once.
        var socket: WebSocket?
        var tid = ""
        while true {
            let found = state.withLock { s -> (WebSocket?, SessionError?, String) in
                if let e = s.ended { return (nil, e, "") }
                guard let ws = s.socket, s.authenticated || type.hasPrefix("session:") || type.hasPrefix("video:") else { return (nil, nil, "") }
                let tid = String(s.nextRequest)
                s.nextRequest += 1
                return (ws, nil, tid)
            }
            if let e = found.1 { throw e }
            if let ws = found.0 { socket = ws; tid = found.2; break }
            if ContinuousClock.now >= deadline { throw .timeout }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let text = Self.encode(["type": .string(type), "tid": .string(tid), "body": .object(body)])
        let ws = socket!
        let requestID = tid
        let timer = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            self?.complete(requestID, .failure(SessionError.timeout))
        }
        defer { timer.cancel() }
        do {
            return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<JSONValue, any Error>) in
                state.withLock { $0.pending[requestID] = continuation }
                ws.send(text: text)
                if ContinuousClock.now >= deadline { complete(requestID, .failure(.timeout)) }
            }
        } catch let e as SessionError {
            throw e
        } catch {
            throw .transportClosed
        }
    }

    private func complete(_ tid: String, _ result: Result<JSONValue, SessionError>) {
        let continuation = state.withLock { $0.pending.removeValue(forKey: tid) }
        continuation?.resume(with: result.mapError { $0 as any Error })
    }

    // MARK: Socket

    /// Opens a new socket (the only one: the previous one is gone or ignored from now on).
    func open() async throws(SessionError) {
        let generation = state.withLock { s -> Int in
            s.generation += 1
            s.authenticated = false
            return s.generation
        }
        var callbacks = WebSocketCallbacks()
        callbacks.onText = { [weak self] _, text in self?.received(text, generation: generation) }
        callbacks.onClose = { [weak self] _, code, reason in self?.closed(code: code, reason: reason, generation: generation) }
        let ws: WebSocket
        do {
            let tls = try options.caFile.map { try TLSContext(clientCAFile: $0) }
            ws = try await WebSocketClient.connect(url: realtimeURL, group: ClientLoops.network, tls: tls, maxMessageSize: 4 << 20,
                                                   callbacks: callbacks)
        } catch {
            throw .unreachable(String(describing: error))
        }
        let current = state.withLock { s -> Bool in
            guard s.generation == generation, s.ended == nil else { return false }
            s.socket = ws
            s.lastPong = .now
            return true
        }
        if !current {
            ws.close()
            throw .closed
        }
    }

    /// A text frame from socket `generation`, on its loop thread, in order.
    private func received(_ text: String, generation: Int) {
        guard let message = try? JSONParser.parse(text), let type = message["type"]?.stringValue else { return }
        let body = message["body"] ?? .object([:])
        if let rid = message["rid"]?.stringValue ?? message["rid"]?.intValue.map(String.init) {
            if type == "session:pong" { state.withLock { $0.lastPong = .now } }
            if type.hasSuffix(":error") || type == "error" {
                complete(rid, .failure(SessionError.from(code: body["code"]?.stringValue ?? type, detail: body["detail"]?.stringValue ?? "")))
            } else {
                complete(rid, .success(body))
            }
            return
        }
        if message["conversation_id"] != nil, let event = ConversationEvent(json: message) {
            deliver([event], generation: generation)
            return
        }
        if type == "session:error", let code = body["code"]?.stringValue {
            state.withLock { $0.pushedError = SessionError.from(code: code, detail: body["detail"]?.stringValue ?? "") }
            return
        }
        deliverPush(message, type: type, generation: generation)
    }

    /// Hands a pushed message to the streams that asked for its type; with no generation, a message
    /// this side makes itself (a local hangup) that every current stream hears.
    func deliverPush(_ message: JSONValue, type: String, generation: Int? = nil) {
        let (targets, calls) = state.withLock { s in
            generation == nil || s.generation == generation
                ? (s.pushStreams.values.filter { type.hasPrefix($0.prefix) }.map(\.continuation), type.hasPrefix("call:") ? Array(s.callStreams.values) : [])
                : ([], [])
        }
        for t in targets { t.yield(message) }
        for c in calls { c.yield(.push(message)) }
    }

    /// Hands new events to every stream, dropping any already delivered.
    func deliver(_ events: [ConversationEvent], generation: Int? = nil) {
        state.withLock { s in
            if let generation, s.generation != generation { return }
            // Yielded under the lock, so the socket and a REST gap fill cannot interleave out of order.
            for e in events where s.seen.accept(conversation: e.conversationID, id: e.id) {
                for c in s.eventStreams.values { c.yield(e) }
                for c in s.callStreams.values { c.yield(.event(e)) }
            }
        }
    }

    private func closed(code: UInt16, reason: String, generation: Int) {
        let outcome = state.withLock { s -> (pending: [CheckedContinuation<JSONValue, any Error>], reason: SessionError, wasCurrent: Bool, wasIn: Bool) in
            guard s.generation == generation else { return ([], .transportClosed, false, false) }
            let wasIn = s.authenticated || s.sessionID != nil
            s.socket = nil
            s.authenticated = false
            let pending = Array(s.pending.values)
            s.pending = [:]
            var why: SessionError = s.pushedError ?? .transportClosed
            switch code {
            case 4001: why = .tokenExpired
            case 4002: why = .pingTimeout
            default: break
            }
            s.pushedError = nil
            return (pending, why, s.ended == nil, wasIn)
        }
        for p in outcome.pending { p.resume(throwing: SessionError.transportClosed) }
        guard outcome.wasCurrent, outcome.wasIn else { return }
        if outcome.reason == .tokenExpired && options.tokenProvider == nil || !options.reconnect {
            shutdown(outcome.reason, notify: true)
            return
        }
        startReconnecting(outcome.reason)
    }

    // MARK: Login and resume

    func loggedIn(_ body: JSONValue, resumed: Bool, replayed: Int) {
        state.withLock { s in
            s.sessionID = body["session_id"]?.stringValue ?? s.sessionID
            if let u = body["user"], let id = u["id"]?.stringValue {
                s.user = UserInfo(id: id, name: u["name"]?.stringValue ?? "", displayName: u["display_name"]?.stringValue ?? s.user?.displayName)
            }
            if body["ice_servers"] != nil { s.iceServers = ICEServer.list(body["ice_servers"]) }
            s.authenticated = true
        }
        publish(.connected(resumed: resumed, replayed: replayed))
    }

    private func publish(_ new: ConnectionState) {
        state.withLock { s in
            s.lastState = new
            for c in s.stateStreams.values { c.yield(new) }
        }
    }

    /// The one reconnect loop: a new socket after a backoff delay, then resume or log in anew.
    private func startReconnecting(_ reason: SessionError) {
        let start = state.withLock { s -> Bool in
            if s.reconnecting || s.ended != nil { return false }
            s.reconnecting = true
            return true
        }
        guard start else { return }
        Task { [weak self] in
            var backoff = self?.options.backoff ?? Backoff()
            var why = reason
            while let self, self.state.withLock({ $0.ended == nil }) {
                self.publish(.reconnecting(reason: why, attempt: backoff.attempt + 1))
                try? await Task.sleep(for: backoff.next(unit: Double.random(in: 0..<1)))
                do throws(SessionError) {
                    try await self.open()
                    try await self.authenticate(after: why)
                    self.state.withLock { $0.reconnecting = false }
                    return
                } catch .closed {
                    return
                } catch {
                    why = error
                    if error == .tokenExpired || error == .invalidToken, self.options.tokenProvider == nil {
                        self.shutdown(error, notify: true)
                        return
                    }
                    self.state.withLock { s in
                        if let ws = s.socket { s.socket = nil; ws.close(code: 4000, reason: "retry") }
                    }
                }
            }
        }
    }

    /// On a fresh socket: resume the session; if the server forgot it, log in again (with a new
    /// token when the old one is refused); then fetch over REST what the socket could not replay.
    private func authenticate(after reason: SessionError) async throws(SessionError) {
        let (sid, lastIDs) = state.withLock { ($0.sessionID, $0.seen.lastIDs) }
        if let sid, reason != .tokenExpired {
            do {
                let body = try await request("session:resume", [
                    "session_id": .string(sid),
                    "last_event_ids": .object(lastIDs.mapValues { .number(Double($0)) }),
                ])
                loggedIn(body, resumed: true, replayed: body["replayed"]?.intValue ?? 0)
                let incomplete = body["incomplete"]?.arrayValue?.compactMap(\.stringValue) ?? []
                if !incomplete.isEmpty { await fillGaps(incomplete) }
                return
            } catch .invalidSession {
                // Gone at the server: a new session below.
            }
        }
        var token = state.withLock { $0.token }
        if reason == .tokenExpired, let provider = options.tokenProvider {
            do { token = try await provider() } catch { throw .invalidToken }
        }
        let body: JSONValue
        do {
            body = try await request("session:login", ["token": .string(token)])
        } catch .tokenExpired, .invalidToken {
            guard let provider = options.tokenProvider else { throw .tokenExpired }
            do { token = try await provider() } catch { throw .invalidToken }
            body = try await request("session:login", ["token": .string(token)])
        }
        state.withLock { $0.token = token }
        loggedIn(body, resumed: false, replayed: 0)
        await fillGaps(Array(lastIDs.keys))
    }

    /// Fetches the events after the last one seen in each conversation over REST and delivers
    /// those not seen yet (the server could not replay them on the socket).
    func fillGaps(_ conversations: [String]) async {
        let api = Conversations(session: self)
        for cid in conversations {
            let last = state.withLock { $0.seen.lastIDs[cid] ?? 0 }
            var cursor: String?
            repeat {
                guard let page = try? await api.events(in: cid, startID: last + 1, pageSize: 100, cursor: cursor) else { break }
                deliver(page.items)
                cursor = page.nextCursor
            } while cursor != nil
        }
    }

    /// The socket was authenticated by other means than a login (`video:connect` and its token): from
    /// now on it is pinged, and its drop ends or restarts the session like a logged-in one's.
    func linked() {
        state.withLock { $0.authenticated = true }
        startHeartbeat()
    }

    // MARK: Heartbeat and shutdown

    private func startHeartbeat() {
        let interval = options.heartbeatInterval
        let timeout = options.heartbeatTimeout
        let task = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let self, self.state.withLock({ $0.ended == nil }) else { return }
                guard self.state.withLock({ $0.authenticated }) else { continue }
                let sent = ContinuousClock.now
                _ = try? await self.request("session:ping", [:], timeout: timeout)
                let dead = self.state.withLock { s -> WebSocket? in
                    guard s.authenticated, s.lastPong < sent else { return nil }
                    return s.socket
                }
                // No pong: the connection is dead though TCP has not noticed; drop it and reconnect.
                if let dead {
                    state.withLock { $0.pushedError = .pingTimeout }
                    dead.close(code: 4000, reason: "heartbeat")
                }
            }
        }
        heartbeat.withLock { $0 = task }
    }

    /// Ends the session on this side: fails what waits, finishes every stream, closes the socket.
    func shutdown(_ reason: SessionError, notify: Bool) {
        let taken = state.withLock { s -> (WebSocket?, [CheckedContinuation<JSONValue, any Error>], [AsyncStream<ConversationEvent>.Continuation],
                                           [AsyncStream<JSONValue>.Continuation], [AsyncStream<ConnectionState>.Continuation],
                                           [AsyncStream<CallInput>.Continuation])? in
            guard s.ended == nil else { return nil }
            s.ended = reason
            s.generation += 1
            let ws = s.socket
            s.socket = nil
            let pending = Array(s.pending.values)
            s.pending = [:]
            defer { s.eventStreams = [:]; s.pushStreams = [:]; s.stateStreams = [:]; s.callStreams = [:] }
            return (ws, pending, Array(s.eventStreams.values), s.pushStreams.values.map(\.continuation), Array(s.stateStreams.values),
                    Array(s.callStreams.values))
        }
        guard let (ws, pending, events, pushes, states, calls) = taken else { return }
        heartbeat.withLock { $0?.cancel() }
        ws?.close()
        for p in pending { p.resume(throwing: SessionError.closed) }
        for c in events { c.finish() }
        for c in pushes { c.finish() }
        for c in calls { c.finish() }
        for c in states {
            if notify { c.yield(.disconnected(reason)) }
            c.finish()
        }
    }

    /// Why the session ended, or nil while it is alive.
    public var endReason: SessionError? { state.withLock { $0.ended } }

    static func encode(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }

    deinit {
        heartbeat.withLock { $0?.cancel() }
    }
}
