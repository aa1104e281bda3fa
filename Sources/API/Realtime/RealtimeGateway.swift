import Crypto
import Foundation
import Platform
import Runtime
import Synchronization
import Wire

/// The realtime gateway at `GET /v1/realtime`: one WebSocket per client, JSON messages (docs/protocol.md).
///
/// After `session:login` the session receives, in order, every event of every conversation its user is in.
/// Each session keeps the last `replayCapacity` events it was sent; a client that reconnects within
/// `retention` sends `session:resume` and gets exactly the events after its `last_event_ids`.
public final class RealtimeGateway: ConversationEventSink, Sendable {
    public struct Settings: Sendable {
        public var pingInterval: Duration = .seconds(15)
        /// Missed pongs after which the session ends with `pingTimeout`.
        public var missedPongs = 2
        public var retention: Duration = .seconds(120)
        public var replayCapacity = 1000
        /// How long a socket may stay open without `session:login`, `session:resume` or `video:connect`.
        public var loginTimeout: Duration = .seconds(10)
        /// STUN and TURN servers for the media of each logged-in session (`ice_servers` in `session:success`).
        public var iceServers = ICEServers.none
        public init() {}
    }

    final class Session: @unchecked Sendable {
        // Invariant: every field is read and written only while holding the gateway's `state` lock.
        let id: String
        let user: User
        let application: Application
        var socket: WebSocket?
        var expiresAt: Date?
        var outstandingPings = 0
        var disconnectedAt: ContinuousClock.Instant?
        var replay: ReplayBuffer
        /// Events waiting for the socket's loop; one drain per batch keeps a busy fan-out to one write per socket.
        var outbox: [String] = []
        var drainScheduled = false

        init(id: String, user: User, application: Application, socket: WebSocket, expiresAt: Date?, replayCapacity: Int) {
            self.id = id
            replay = ReplayBuffer(capacity: replayCapacity)
            self.user = user
            self.application = application
            self.socket = socket
            self.expiresAt = expiresAt
        }
    }

    struct State {
        var sessions: [String: Session] = [:]
        var byUser: [String: Set<String>] = [:]
        var bySocket: [WebSocket: String] = [:]
        /// Sockets that have not authenticated yet, with when they opened.
        var unauthenticated: [WebSocket: ContinuousClock.Instant] = [:]
        /// Each socket's requests, handled one at a time in arrival order.
        var requests: [WebSocket: SerialJobs] = [:]
    }

    let settings: Settings
    let authenticator: Authenticator
    /// Where requests run (they may reach the store): never the socket's event loop.
    let work: WorkPool
    /// Where conversation events fan out to sessions (see `deliver`); nil: on the caller's thread.
    let deliveryLoop: EventLoop?
    let core: PlatformCore
    let state = Mutex(State())
    let logger = Logger(label: "realtime")
    let ticker = Mutex<Task<Void, Never>?>(nil)
    /// Wakes a ticker that found no socket to watch and stopped ticking (see `start`).
    let (socketOpened, socketOpenedSignal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    /// Extra message handlers (media signaling) keyed by message type prefix.
    let handlers = Mutex<[String: @Sendable (RealtimeContext, JSONValue) async throws -> JSONValue?]>([:])

    public init(core: PlatformCore, authenticator: Authenticator, settings: Settings = Settings(), work: WorkPool,
                deliveryLoop: EventLoop? = nil) {
        self.work = work
        self.deliveryLoop = deliveryLoop
        self.core = core
        self.authenticator = authenticator
        self.settings = settings
        Metrics.shared.gauge("switchboard_realtime_sessions", help: "Logged-in realtime sessions.") { [weak self] in
            Double(self?.state.withLock { $0.sessions.values.filter { $0.socket != nil }.count } ?? 0)
        }
    }

    public func start() {
        // Token expiry is checked more often than pings are sent so `tokenExpired` arrives within a fraction
        // of a second of `exp`, whatever the ping interval.
        let step = min(settings.pingInterval, .milliseconds(250))
        let opened = socketOpened
        let task = Task { [weak self, settings] in
            // Deadlines rather than summed sleeps, so pings stay exactly one interval apart.
            let clock = ContinuousClock()
            var nextPing = clock.now + settings.pingInterval
            var wakes = opened.makeAsyncIterator()
            while !Task.isCancelled {
                // No socket, logged in or not: nothing can expire or need a ping until one opens, so an
                // idle server is not woken four times a second for nothing.
                if self?.watchesNothing ?? true {
                    guard await wakes.next() != nil else { return }
                    nextPing = clock.now + settings.pingInterval
                    continue
                }
                try? await Task.sleep(until: min(nextPing, clock.now + step), clock: clock)
                let ping = clock.now >= nextPing
                if ping { nextPing += settings.pingInterval }
                self?.tick(ping: ping)
            }
        }
        ticker.withLock { $0 = task }
    }

    public func stop() { ticker.withLock { $0?.cancel() } }

    private var watchesNothing: Bool { state.withLock { $0.unauthenticated.isEmpty && $0.sessions.isEmpty } }

    /// Handlers for messages that authenticate themselves (video clients present a video token, not a login).
    let anonymousHandlers = Mutex<[String: @Sendable (WebSocket, JSONValue) async throws -> JSONValue?]>([:])

    public func handleAnonymous(prefix: String, _ handler: @escaping @Sendable (WebSocket, JSONValue) async throws -> JSONValue?) {
        anonymousHandlers.withLock { $0[prefix] = handler }
    }

    /// Answers `type` (e.g. `session:error`) with one of the protocol's error codes.
    func fail(_ ws: WebSocket, _ type: String, rid: JSONValue?, _ code: RealtimeErrorCode, _ detail: String) {
        send(ws, type: type, rid: rid, body: ["code": .string(code.rawValue), "detail": .string(detail)])
    }

    func sendError(_ ws: WebSocket, type: String, rid: JSONValue?, _ error: any Error) {
        let e = error as? HTTPErrorConvertible
        send(ws, type: type + ":error", rid: rid, body: ["code": .string(Self.realtimeCode(e?.code ?? "internal-error")),
                                                         "detail": .string(e?.detail ?? "The request failed.")])
    }

    /// Realtime error codes are camelCase across `session:*`, `rtc:*` and `video:*`; REST's kebab-case codes
    /// (`room-full`) are spelled so (`roomFull`) when they reach a realtime client.
    static func realtimeCode(_ code: String) -> String {
        let parts = code.split(separator: "-")
        guard parts.count > 1 else { return code }
        return String(parts[0]) + parts.dropFirst().map { $0.prefix(1).uppercased() + $0.dropFirst() }.joined()
    }

    /// Registers a handler for client messages whose type starts with `prefix` (e.g. `rtc:`).
    public func handle(prefix: String, _ handler: @escaping @Sendable (RealtimeContext, JSONValue) async throws -> JSONValue?) {
        handlers.withLock { $0[prefix] = handler }
    }

    func register(on router: inout Router) {
        router.get("/v1/realtime") { [self] req in
            var callbacks = WebSocketCallbacks()
            callbacks.onOpen = { [weak self] ws in self?.opened(ws) }
            callbacks.onText = { [weak self] ws, text in self?.received(text, on: ws) }
            callbacks.onPong = { [weak self] ws, _ in self?.pong(ws) }
            callbacks.onClose = { [weak self] ws, _, _ in self?.closed(ws) }
            return try .webSocket(req, maxMessageSize: Self.maxMessageSize, callbacks: callbacks)
        }
    }

    /// The largest realtime message a client may send (larger ones close the socket with 1009).
    public static let maxMessageSize = 256 * 1024
    /// Requests of one socket waiting for the one before them to finish; more are refused (`tooManyRequests`).
    public static let maxPendingRequests = 4096

    /// Queues a request behind the socket's earlier ones; it runs off the event loop (it may reach the store).
    /// Only `session:resume` and `session:ping` act at once on the socket's loop (a resume's replay must go
    /// out before events delivered meanwhile).
    private func enqueue(_ ws: WebSocket, type: String, rid: JSONValue?, _ work: @escaping @Sendable () async -> Void) {
        guard let jobs = state.withLock({ $0.requests[ws] }) else { return }
        if !jobs.add(work) {
            fail(ws, type + ":error", rid: rid, .tooManyRequests, "Over \(Self.maxPendingRequests) requests are waiting; slow down.")
        }
    }

    // MARK: Client messages

    /// A new socket must authenticate within `loginTimeout`; it is pinged from the start, so a peer that
    /// vanished is noticed even before it logs in.
    func opened(_ ws: WebSocket) {
        let now = ContinuousClock.now
        state.withLock { s in
            s.unauthenticated[ws] = now
            s.requests[ws] = SerialJobs(capacity: Self.maxPendingRequests, executor: work)
        }
        socketOpenedSignal.yield()
        ws.ping()
    }

    /// Marks a socket as authenticated by other means (a video token), which lifts the login deadline.
    public func admit(_ ws: WebSocket) {
        state.withLock { _ = $0.unauthenticated.removeValue(forKey: ws) }
    }

    func received(_ text: String, on ws: WebSocket) {
        guard let msg = try? JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)), let type = msg["type"]?.stringValue else {
            fail(ws, "error", rid: nil, .invalidMessage, "Messages are JSON objects with a type.")
            return
        }
        // Requests carry a `tid` that the answer echoes as `rid`; `cid` is accepted from older clients.
        let rid = msg["tid"] ?? msg["cid"]
        let body = msg["body"] ?? .object([:])
        switch SessionRequest(rawValue: type) {
        case .resume: resume(ws, rid: rid, body: body)
        case .ping: send(ws, type: "session:pong", rid: rid, body: .object([:]))
        default: enqueue(ws, type: type, rid: rid) { [self] in await handle(type, msg, rid: rid, body: body, on: ws) }
        }
    }

    /// One request, in its turn in the socket's queue.
    private func handle(_ type: String, _ msg: JSONValue, rid: JSONValue?, body: JSONValue, on ws: WebSocket) async {
        switch SessionRequest(rawValue: type) {
        case .login: login(ws, rid: rid, token: body["token"]?.stringValue)
        case .refresh: refresh(ws, rid: rid, token: body["token"]?.stringValue)
        case .logout:
            logout(ws)
            send(ws, type: "session:logout:success", rid: rid, body: .object([:]))
            ws.close(code: 1000, reason: "logged out")
        default:
            let work: @Sendable () async throws -> JSONValue?
            if let anonymous = anonymousHandlers.withLock({ hs in hs.first { type.hasPrefix($0.key) }?.value }) {
                work = { try await anonymous(ws, msg) }
            } else {
                guard let session = session(for: ws) else {
                    fail(ws, "session:error", rid: rid, .notLoggedIn, "Send session:login first.")
                    return
                }
                guard let handler = handlers.withLock({ hs in hs.first { type.hasPrefix($0.key) }?.value }) else {
                    fail(ws, "error", rid: rid, .unknownType, "Unknown message type '\(type)'.")
                    return
                }
                let context = RealtimeContext(sessionID: session.id, user: session.user, application: session.application,
                                              socket: ws, gateway: self)
                work = { try await handler(context, msg) }
            }
            do {
                if let reply = try await work() { send(ws, type: type + ":success", rid: rid, body: reply) }
            } catch {
                sendError(ws, type: type, rid: rid, error)
            }
        }
    }

    private func login(_ ws: WebSocket, rid: JSONValue?, token: String?) {
        guard let token else {
            fail(ws, "session:error", rid: rid, .invalidToken, "body.token is required.")
            return
        }
        let principal: Principal
        do {
            principal = try authenticator.token(token)
        } catch .expired {
            fail(ws, "session:error", rid: rid, .tokenExpired, "The token has expired.")
            return
        } catch {
            fail(ws, "session:error", rid: rid, .invalidToken, "The token is not valid.")
            return
        }
        guard case .user(let app, let user, let acl, let exp) = principal else {
            fail(ws, "session:error", rid: rid, .invalidToken, "A user token (with sub) is required.")
            return
        }
        if let acl, !acl.allows(path: "/v1/sessions/realtime") {
            fail(ws, "session:error", rid: rid, .forbidden, "The token's ACL does not allow sessions.")
            return
        }
        let session = Session(id: "SES-" + UUID4.generate(), user: user, application: app, socket: ws, expiresAt: exp,
                              replayCapacity: settings.replayCapacity)
        // A first ping right away counts as the first of the two a silent client may miss, so a client that
        // never answers is gone within two intervals of logging in (any pong clears the count).
        session.outstandingPings = 1
        var success: [String: JSONValue] = ["type": "session:success", "body": [
            "session_id": .string(session.id),
            "user": ["id": .string(user.id), "name": .string(user.name), "display_name": user.displayName.map(JSONValue.string) ?? .null],
            "ice_servers": settings.iceServers.forClient(session.id),
        ]]
        if let rid { success["rid"] = rid }
        let text = Self.encode(.object(success))
        // The answer goes into the session's outbox as it is registered, so no event can overtake it.
        let drain = state.withLock { s in
            if let old = s.bySocket[ws] { Self.remove(old, from: &s) }
            s.unauthenticated[ws] = nil
            s.sessions[session.id] = session
            s.byUser[user.id, default: []].insert(session.id)
            s.bySocket[ws] = session.id
            return enqueue(text, for: session)
        }
        if drain { scheduleDrain(ws, session) }
        ws.ping()
    }

    private func resume(_ ws: WebSocket, rid: JSONValue?, body: JSONValue) {
        guard let sid = body["session_id"]?.stringValue else {
            fail(ws, "session:error", rid: rid, .invalidSession, "body.session_id is required.")
            return
        }
        var lastIDs: [String: Int64] = [:]
        if case .object(let o)? = body["last_event_ids"] {
            for (k, v) in o { lastIDs[k] = v.int64Value ?? 0 }
        }
        let now = ContinuousClock.now
        let retention = settings.retention
        let result: (Session, [ReplayBuffer.Entry], [String])? = state.withLock { s in
            guard let session = s.sessions[sid] else { return nil }
            if let since = session.disconnectedAt, now - since > retention { Self.remove(sid, from: &s); return nil }
            if let old = session.socket { s.bySocket[old] = nil }
            if let previous = s.bySocket[ws], previous != sid { Self.remove(previous, from: &s) }
            session.socket = ws
            session.disconnectedAt = nil
            session.outstandingPings = 0
            // Anything still waiting for the old socket is in the ring, so the replay below covers it.
            session.outbox = []
            session.drainScheduled = false
            s.bySocket[ws] = sid
            s.unauthenticated[ws] = nil
            let (missed, incomplete) = session.replay.missed(after: lastIDs)
            return (session, missed, incomplete)
        }
        guard let (session, missed, incomplete) = result else {
            fail(ws, "session:error", rid: rid, .invalidSession, "The session is unknown or expired; log in again.")
            return
        }
        send(ws, type: "session:success", rid: rid, body: [
            "session_id": .string(session.id), "resumed": true, "replayed": .number(Double(missed.count)),
            "incomplete": .array(incomplete.map(JSONValue.string)),
            "user": ["id": .string(session.user.id), "name": .string(session.user.name)],
        ])
        // Runs on the socket's loop, so these go out before any event delivered from another thread meanwhile.
        for e in missed { ws.send(text: e.text) }
    }

    private func refresh(_ ws: WebSocket, rid: JSONValue?, token: String?) {
        guard let session = session(for: ws) else {
            fail(ws, "session:error", rid: rid, .notLoggedIn, "Send session:login first.")
            return
        }
        guard let token, case .user(_, let user, _, let exp)? = try? authenticator.token(token), user.id == session.user.id else {
            fail(ws, "session:refresh:error", rid: rid, .invalidToken, "A valid token for the same user is required.")
            return
        }
        state.withLock { _ in session.expiresAt = exp }
        send(ws, type: "session:refresh:success", rid: rid, body: .object([:]))
    }

    private func logout(_ ws: WebSocket) {
        state.withLock { s in
            if let sid = s.bySocket[ws] { Self.remove(sid, from: &s) }
        }
    }

    func pong(_ ws: WebSocket) {
        state.withLock { s in
            if let sid = s.bySocket[ws] { s.sessions[sid]?.outstandingPings = 0 }
        }
    }

    func closed(_ ws: WebSocket) {
        let now = ContinuousClock.now
        state.withLock { s in
            s.unauthenticated[ws] = nil
            s.requests[ws] = nil
            guard let sid = s.bySocket.removeValue(forKey: ws), let session = s.sessions[sid] else { return }
            session.socket = nil
            session.disconnectedAt = now
        }
        for h in closeHandlers.withLock({ $0 }) { h(ws) }
    }

    let closeHandlers = Mutex<[@Sendable (WebSocket) -> Void]>([])

    /// Called when a socket goes away (media teardown hooks in here).
    public func onSocketClosed(_ h: @escaping @Sendable (WebSocket) -> Void) { closeHandlers.withLock { $0.append(h) } }

    func session(for ws: WebSocket) -> Session? {
        state.withLock { s in s.bySocket[ws].flatMap { s.sessions[$0] } }
    }

    /// Session ids of a user that are connected now.
    public func connectedSessionCount(userID: String) -> Int {
        state.withLock { s in (s.byUser[userID] ?? []).filter { s.sessions[$0]?.socket != nil }.count }
    }

    private static func remove(_ sid: String, from s: inout State) {
        guard let session = s.sessions.removeValue(forKey: sid) else { return }
        s.byUser[session.user.id]?.remove(sid)
        if s.byUser[session.user.id]?.isEmpty == true { s.byUser[session.user.id] = nil }
        if let ws = session.socket { s.bySocket[ws] = nil }
    }

    // MARK: Heartbeats and expiry


    func tick(ping: Bool = true) {
        let now = core.clock.now()
        let clockNow = ContinuousClock.now
        var toPing: [WebSocket] = []
        var toEnd: [(WebSocket, RealtimeErrorCode, String)] = []
        state.withLock { s in
            for (ws, opened) in s.unauthenticated where clockNow - opened >= settings.loginTimeout {
                toEnd.append((ws, .loginTimeout, "No session:login within the login timeout."))
                s.unauthenticated[ws] = nil
            }
            for (sid, session) in s.sessions {
                guard let ws = session.socket else {
                    if let since = session.disconnectedAt, clockNow - since > settings.retention { Self.remove(sid, from: &s) }
                    continue
                }
                if let exp = session.expiresAt, Authenticator.hasExpired(exp, at: now) {
                    toEnd.append((ws, .tokenExpired, "The token expired; send session:refresh before it does."))
                    Self.remove(sid, from: &s)
                } else if !ping {
                    continue
                } else if session.outstandingPings >= settings.missedPongs {
                    toEnd.append((ws, .pingTimeout, "No pong to \(settings.missedPongs) pings."))
                    session.socket = nil
                    session.disconnectedAt = clockNow
                    s.bySocket[ws] = nil
                } else {
                    session.outstandingPings += 1
                    toPing.append(ws)
                }
            }
        }
        for ws in toPing { ws.ping() }
        for (ws, code, detail) in toEnd {
            fail(ws, "session:error", rid: nil, code, detail)
            ws.close(code: code.closeCode ?? 4002, reason: code.rawValue)
        }
    }

    // MARK: Event delivery

    /// Called after the event's commit, under the store's writer lock: hands the fan-out to the delivery
    /// loop (one loop, so its FIFO mailbox keeps commit order). Fanning out there rather than on the
    /// committing worker thread keeps the sessions' lock on an event-loop thread, where the drains of the
    /// sockets on that loop run inline instead of contending for it from another thread.
    public func deliver(_ event: ConversationEvent, recipients: [String]) {
        if let loop = deliveryLoop, !loop.inLoop {
            loop.execute { [self] in fanOut(event, recipients: recipients) }
        } else {
            fanOut(event, recipients: recipients)
        }
    }

    private func fanOut(_ event: ConversationEvent, recipients: [String]) {
        let text = Self.eventText(event)
        let entry = ReplayBuffer.Entry(conversationID: event.conversationID, id: event.id, text: text)
        let drains = state.withLock { s in
            var drains: [(WebSocket, Session)] = []
            for user in recipients {
                guard let sids = s.byUser[user] else { continue }
                for sid in sids {
                    guard let session = s.sessions[sid], session.application.id == event.applicationID else { continue }
                    session.replay.append(entry)
                    if let ws = session.socket, enqueue(text, for: session) { drains.append((ws, session)) }
                }
            }
            return drains
        }
        // Outside the lock: on the socket's own loop the drain runs inline and takes the lock itself.
        scheduleDrains(drains)
    }

    /// Queues a message for a session's socket; true when a drain has to be scheduled. Caller holds `state`.
    private func enqueue(_ text: String, for session: Session) -> Bool {
        session.outbox.append(text)
        if session.drainScheduled { return false }
        session.drainScheduled = true
        return true
    }

    private func scheduleDrain(_ ws: WebSocket, _ session: Session) {
        ws.sendTexts(drainer(ws, session))
    }

    /// Schedules the drains of a fan-out: one hop per event loop, not one per socket.
    private func scheduleDrains(_ drains: [(WebSocket, Session)]) {
        WebSocket.sendTexts(drains.map { ws, session in (ws, drainer(ws, session)) })
    }

    /// What a drain sends: the session's outbox, taken under the lock.
    private func drainer(_ ws: WebSocket, _ session: Session) -> @Sendable () -> [String] {
        { [weak self] in
            guard let self else { return [] }
            return self.state.withLock { _ in
                // A socket replaced by a resume has nothing left to send; the new one drains on its own.
                guard session.socket == ws else { return [] }
                let out = session.outbox
                session.outbox = []
                session.drainScheduled = false
                return out
            }
        }
    }

    /// Sends a message to every connected session of `userID` (media signaling pushes), after any events
    /// already queued for those sessions.
    public func push(userID: String, type: String, body: JSONValue) {
        let text = Self.encode(.object(["type": .string(type), "body": body]))
        let drains = state.withLock { s in
            (s.byUser[userID] ?? []).compactMap { sid -> (WebSocket, Session)? in
                guard let session = s.sessions[sid], let ws = session.socket, enqueue(text, for: session) else { return nil }
                return (ws, session)
            }
        }
        scheduleDrains(drains)
    }

    static func eventText(_ e: ConversationEvent) -> String {
        guard case .object(var o) = e.json else { return "{}" }
        o["cid"] = .string(e.conversationID)
        return encode(.object(o))
    }

    func send(_ ws: WebSocket, type: String, rid: JSONValue?, body: JSONValue) {
        var o: [String: JSONValue] = ["type": .string(type), "body": body]
        if let rid { o["rid"] = rid }
        let text = Self.encode(.object(o))
        // Behind any events still queued for this socket, so a reply never overtakes an earlier event.
        let queued = state.withLock { s in
            guard let sid = s.bySocket[ws], let session = s.sessions[sid], session.socket == ws, session.drainScheduled else { return false }
            session.outbox.append(text)
            return true
        }
        if !queued { ws.send(text: text) }
    }

    static func encode(_ v: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(v)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
    }
}

/// Who sent a message a registered handler is answering.
public struct RealtimeContext: Sendable {
    public let sessionID: String
    public let user: User
    public let application: Application
    public let socket: WebSocket
    public let gateway: RealtimeGateway
}
