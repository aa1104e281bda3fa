import Foundation
import Synchronization
import Wire

/// One HTTP/1.1 connection: parses requests, runs them one at a time in arrival order, answers them in
/// that order, enforces timeouts, and hands over to WebSocket on upgrade.
///
/// Pipelined requests are parsed and queued while earlier ones run (up to `maxPipelined`), so a client
/// that pipelines does not pay a round trip through the loop between one handler and the next; each
/// handler still starts only after the previous one has finished.
///
/// Confined to its channel's loop; tasks running handlers come back through `loop.execute`.
final class HTTPServerConnection: ChannelHandler, @unchecked Sendable {
    enum State {
        case idle
        case readingBody(HTTPRequestHead)
        /// Parsing stops until responses in flight are written (an upgrade, a last request, a full pipeline).
        case responding
        case webSocket
        case closed
    }

    unowned let server: HTTPServer
    let channel: Channel
    let isSecure: Bool
    private var parser: HTTPRequestParser
    private var state: State = .idle
    private var body: [UInt8] = []
    /// What the one connection timer is watching for, with its deadline in monotonic nanoseconds.
    private enum Watch {
        case none
        /// A request (or the first one) must arrive whole by then: 408 or a silent close.
        case header(UInt64)
        /// Keep-alive with nothing sent since the last response: close by then.
        case idle(UInt64)
    }
    private var watch = Watch.none
    /// One timer per connection, re-armed lazily: moving a deadline later costs nothing per request,
    /// the timer re-schedules itself when it fires early.
    private var timer: TimerHandle?
    private var timerFiresAt: UInt64 = 0
    private var draining = false
    /// True once any byte of the next request has arrived. The parser keeps parsed head lines in its own
    /// state, so its buffer can be empty in the middle of a request.
    private var requestStarted = false
    var webSocket: WebSocketConnection?
    /// Streamed-body producers waiting for the outbound queue to drain.
    private var writableWaiters: [CheckedContinuation<Void, Error>] = []
    /// Queued bytes above which a streamed body's next write waits for the socket.
    static let streamHighWater = 256 << 10
    /// Requests parsed but not yet answered, beyond which reading stops until a response goes out.
    static let maxPipelined = 16
    /// Requests dispatched whose responses are not written yet.
    private var inFlight = 0
    /// The latest handler that runs on the loop: a request after it starts when it has finished.
    private var lastHandler: Task<Void, Never>?
    /// Handlers that run off the loops, one at a time in request order: one task takes a pipelined burst
    /// one request after another, and wakes the loop once for all their responses (`EventLoop.execute`).
    private lazy var lane = SerialJobs(capacity: Self.maxPipelined + 1, executor: server.work)
    /// Requests handed to `lane` whose responses have not come back to the loop yet.
    private var laneOutstanding = 0
    /// Responses that arrived while a streamed body was still being written, in request order.
    private var ready: [(HTTPResponse, HTTPRequestHead)] = []
    private var streaming = false
    /// Reading stopped because `maxPipelined` requests wait; it resumes when one is answered.
    private var pipelineFull = false
    /// A parse error met behind requests in flight, answered once they are.
    private var pendingFailure: (status: Int, detail: String)?
    /// A `100 Continue` owed to a request whose head arrived behind requests in flight.
    private var continueOwed = false

    init(server: HTTPServer, channel: Channel, isSecure: Bool) {
        self.server = server
        self.channel = channel
        self.isSecure = isSecure
        parser = HTTPRequestParser(limits: server.configuration.parserLimits)
    }

    var loop: EventLoop { channel.loop }

    func channelActive(_ channel: Channel) {
        watchHeader()
    }

    func channelRead(_ channel: Channel, _ bytes: UnsafeRawBufferPointer) {
        if let ws = webSocket {
            ws.receive(bytes)
            return
        }
        parser.append(bytes)
        if case .idle = state, inFlight == 0 {
            requestStarted = true
            // Dribbling bytes must not extend the deadline (slowloris), so only a new request starts it.
            if case .header = watch {} else { watchHeader() }
        }
        process()
    }

    func channelWritable(_ channel: Channel) {
        webSocket?.writable()
        resumeWriters(nil)
    }

    private func resumeWriters(_ error: Error?) {
        guard !writableWaiters.isEmpty else { return }
        let waiters = writableWaiters
        writableWaiters = []
        for w in waiters {
            if let error { w.resume(throwing: error) } else { w.resume() }
        }
    }

    func channelInactive(_ channel: Channel) {
        state = .closed
        watch = .none
        loop.cancel(timer)
        timer = nil
        webSocket?.closed()
        resumeWriters(SocketError.closed)
        server.connectionClosed(self, loop: loop.index)
    }

    /// Graceful shutdown: close idle connections now, finish the one in flight, close WebSockets with 1001.
    func beginDrain() {
        draining = true
        switch state {
        case .idle where !requestStarted && inFlight == 0:
            channel.close()
        case .webSocket:
            webSocket?.close(code: 1001, reason: "server shutting down")
        default:
            break
        }
    }

    private func watchHeader() {
        setWatch(.header(Instant.now().adding(server.configuration.headerTimeout).nanoseconds))
    }

    private func watchIdle() {
        setWatch(.idle(Instant.now().adding(server.configuration.idleTimeout).nanoseconds))
    }

    private func setWatch(_ w: Watch) {
        watch = w
        let deadline: UInt64
        switch w {
        case .none: return
        case .header(let d), .idle(let d): deadline = d
        }
        if timer != nil && timerFiresAt <= deadline { return }
        loop.cancel(timer)
        timerFiresAt = deadline
        timer = loop.schedule(at: Instant(nanoseconds: deadline)) { [weak self] in self?.timerFired() }
    }

    private func timerFired() {
        timer = nil
        let now = Instant.now().nanoseconds
        switch watch {
        case .none:
            return
        case .header(let d) where d > now, .idle(let d) where d > now:
            setWatch(watch)
        case .header:
            watch = .none
            switch state {
            case .idle where !requestStarted:
                channel.close()
            case .idle, .readingBody:
                fail(status: 408, detail: "The request was not received in time.")
            default:
                break
            }
        case .idle:
            watch = .none
            if case .idle = state { channel.close() }
        }
    }

    private func process() {
        while true {
            switch state {
            case .idle, .readingBody: break
            default: return
            }
            let event: HTTPParseEvent?
            do {
                event = try parser.next()
            } catch {
                failParsing(status: error.status, detail: error.detail)
                return
            }
            guard let event else { return }
            switch event {
            case .head(let head):
                if head.hasBodyFraming {
                    // One route lookup, and none at all for the common request without a body.
                    let routeLimit = server.responder.bodyLimit(for: head)
                    if let routeLimit { parser.setBodyLimit(routeLimit) }
                    let limit = routeLimit ?? server.configuration.parserLimits.maxBody
                    if let length = head.headers["content-length"].flatMap(Int.init), length > limit {
                        failParsing(status: 413, detail: "The body is larger than \(limit) bytes.")
                        return
                    }
                }
                if (head.method == .POST || head.method == .PUT || head.method == .PATCH) && !head.hasBodyFraming {
                    failParsing(status: 411, detail: "A Content-Length or chunked Transfer-Encoding is required.")
                    return
                }
                if head.expectsContinue && head.version == .http1_1 {
                    // An interim response may not cut into the responses of earlier requests.
                    if inFlight == 0 { writeContinue() } else { continueOwed = true }
                }
                body.removeAll(keepingCapacity: true)
                state = .readingBody(head)
            case .body(let chunk):
                body.append(contentsOf: chunk)
            case .end:
                guard case .readingBody(let head) = state else { return }
                watch = .none
                dispatch(head)
            }
        }
    }

    /// A request that cannot be parsed is answered with its error and the connection closes; behind
    /// requests in flight, the error waits its turn.
    private func failParsing(status: Int, detail: String) {
        guard inFlight > 0 else {
            fail(status: status, detail: detail)
            return
        }
        pendingFailure = (status, detail)
        state = .responding
        channel.setReading(false)
    }

    private func writeContinue() {
        channel.write(Array("HTTP/1.1 100 Continue\r\n\r\n".utf8))
    }

    private func dispatch(_ head: HTTPRequestHead) {
        inFlight += 1
        // Keep parsing behind this request unless nothing may follow it (an upgrade hands the bytes after it
        // to another protocol; a last request closes) or the pipeline is full.
        if head.isUpgrade || !head.keepAlive || draining || inFlight >= Self.maxPipelined {
            pipelineFull = !(head.isUpgrade || !head.keepAlive || draining)
            state = .responding
            channel.setReading(false)
        } else {
            state = .idle
        }
        requestStarted = false
        var parsed = HTTPRequest(head: head, body: body, remoteAddress: channel.remote, isSecure: isSecure)
        body = []
        if draining { parsed.head.headers["connection"] = "close" }
        let request = parsed
        let responder = server.responder
        let loop = self.loop
        let previous = lastHandler
        // Handlers that reach the store (or any other blocking work) run off the loops, so a slow write never
        // stalls the connections of a loop; routes that do no I/O opt in to the loop and save the thread hop
        // (behind requests still in the lane they take their turn there, and hop to the loop to run).
        let onLoop = responder.runsOnEventLoop(head)
        if laneOutstanding == 0 && onLoop {
            lastHandler = Task(executorPreference: loop) { [self] in
                await previous?.value
                let response = await responder.respond(to: request)
                if loop.inLoop {
                    self.responseReady(response, for: head)
                } else {
                    loop.execute { [self] in self.responseReady(response, for: head) }
                }
            }
            return
        }
        // Anything still running on the loop is older: the lane's job waits for it, and nothing on the loop
        // starts again before the lane is empty.
        lastHandler = nil
        laneOutstanding += 1
        let queued = lane.add { [self] in
            await previous?.value
            let response = onLoop ? await Task(executorPreference: loop) { await responder.respond(to: request) }.value
                                  : await responder.respond(to: request)
            loop.execute { [self] in
                self.laneOutstanding -= 1
                self.responseReady(response, for: head)
            }
        }
        // Cannot happen (at most `maxPipelined` requests are in flight); answered rather than trusted.
        if !queued {
            laneOutstanding -= 1
            responseReady(.error(APIError(status: 503, code: "service-unavailable", title: "Service Unavailable",
                                          detail: "Too many requests are waiting on this connection.")), for: head)
        }
    }

    /// Handlers finish in request order; a response waits only for a streamed body still being written.
    private func responseReady(_ response: HTTPResponse, for head: HTTPRequestHead) {
        if streaming {
            ready.append((response, head))
        } else {
            send(response, for: head)
        }
    }

    private func send(_ response: HTTPResponse, for request: HTTPRequestHead) {
        guard channel.isOpen else { return }
        var keepAlive = request.keepAlive && !draining
        if response.headers["connection"]?.lowercased() == "close" { keepAlive = false }
        if case .upgrade(let upgrade) = response.body, response.status == 101 {
            upgradeToWebSocket(response, upgrade)
            return
        }
        var head = HTTPResponseHead(status: response.status, headers: response.headers)
        head.headers["Server"] = server.configuration.serverName
        head.headers["Date"] = HTTPDate.now()
        head.headers["Connection"] = keepAlive ? (request.version == .http1_0 ? "keep-alive" : nil) : "close"
        let isHead = request.method == .HEAD
        let noBody = isHead || response.status == 204 || response.status == 304 || response.status < 200
        switch response.body {
        case .bytes(let bytes):
            if response.status != 204 && response.status != 304 {
                head.headers["Content-Length"] = String(bytes.count)
            }
            var out: [UInt8] = []
            out.reserveCapacity(256 + (noBody ? 0 : bytes.count))
            head.serialize(into: &out)
            if !noBody { out.append(contentsOf: bytes) }
            channel.write(out)
            finish(keepAlive: keepAlive)
        case .upgrade:
            // A handler returned an upgrade without 101: treat as a plain empty response.
            head.headers["Content-Length"] = "0"
            channel.write(head.serialized())
            finish(keepAlive: keepAlive)
        case .stream(let produce):
            if noBody {
                channel.write(head.serialized())
                finish(keepAlive: keepAlive)
                return
            }
            head.headers["Transfer-Encoding"] = "chunked"
            head.headers["Content-Length"] = nil
            channel.write(head.serialized())
            streaming = true
            let loop = self.loop
            let channel = self.channel
            let keep = keepAlive
            Task(executorPreference: loop) { [self] in
                let writer = ResponseBodyWriter { bytes in
                    try await withCheckedThrowingContinuation { (cont: CheckedContinuation<Void, Error>) in
                        let work: @Sendable () -> Void = { [self] in
                            guard channel.isOpen else { cont.resume(throwing: SocketError.closed); return }
                            channel.write(HTTPChunk.encode(bytes))
                            // A peer that reads slowly slows the producer instead of growing the queue.
                            if channel.isOpen && channel.pendingOutboundBytes > Self.streamHighWater {
                                self.writableWaiters.append(cont)
                            } else if channel.isOpen {
                                cont.resume()
                            } else {
                                cont.resume(throwing: SocketError.closed)
                            }
                        }
                        if loop.inLoop { work() } else { loop.execute(work) }
                    }
                }
                let ok: Bool
                do { try await produce(writer); ok = true } catch { ok = false }
                loop.execute { [self] in
                    self.streaming = false
                    guard self.channel.isOpen else { return }
                    if ok {
                        self.channel.write(HTTPChunk.terminal)
                        self.finish(keepAlive: keep)
                    } else {
                        // The body is cut short: the client sees a truncated chunked message.
                        self.channel.close()
                    }
                }
            }
        }
    }

    /// One response is written: the next ready one goes out, or parsing resumes.
    private func finish(keepAlive: Bool) {
        inFlight -= 1
        guard keepAlive else {
            // Requests still running behind a closing response are not answered.
            state = .closed
            ready = []
            channel.closeWhenFlushed()
            return
        }
        if !ready.isEmpty {
            let (response, head) = ready.removeFirst()
            send(response, for: head)
            return
        }
        // Nothing left to chain behind: let the finished task (and the request and response it holds) go.
        if inFlight == 0 { lastHandler = nil }
        if inFlight > 0 {
            // A full pipeline has room again; an upgrade or a last request stays paused until it is answered.
            if pipelineFull {
                pipelineFull = false
                state = .idle
                channel.setReading(true)
                process()
            }
            return
        }
        if let failure = pendingFailure {
            pendingFailure = nil
            fail(status: failure.status, detail: failure.detail)
            return
        }
        if continueOwed {
            continueOwed = false
            writeContinue()
        }
        switch state {
        case .readingBody:
            // The next request is already on its way in.
            requestStarted = true
            watchHeader()
        default:
            state = .idle
            requestStarted = parser.bufferedByteCount > 0
            if requestStarted { watchHeader() } else { watchIdle() }
        }
        channel.setReading(true)
        process()
    }

    private func fail(status: Int, detail: String) {
        let error = APIError(status: status, code: HTTPResponseHead.reasonPhrase(for: status).lowercased().replacingOccurrences(of: " ", with: "-"),
                             title: HTTPResponseHead.reasonPhrase(for: status), detail: detail)
        var response = HTTPResponse.error(error)
        response.headers["Connection"] = "close"
        server.metrics.recordRequest(method: "-", route: "(parse error)", status: status, seconds: 0)
        var head = HTTPResponseHead(status: status, headers: response.headers)
        head.headers["Server"] = server.configuration.serverName
        head.headers["Date"] = HTTPDate.now()
        head.headers["Content-Length"] = String(response.bodyBytes.count)
        var out = head.serialized()
        out.append(contentsOf: response.bodyBytes)
        state = .closed
        watch = .none
        channel.write(out)
        channel.closeWhenFlushed()
    }

    private func upgradeToWebSocket(_ response: HTTPResponse, _ upgrade: WebSocketUpgrade) {
        var head = HTTPResponseHead(status: 101, headers: response.headers)
        head.headers["Upgrade"] = "websocket"
        head.headers["Connection"] = "Upgrade"
        channel.write(head.serialized())
        state = .webSocket
        inFlight = 0
        lastHandler = nil
        watch = .none
        loop.cancel(timer)
        timer = nil
        let ws = WebSocketConnection(channel: channel, role: .server, upgrade: upgrade,
                                     maxMessage: upgrade.maxMessageSize ?? server.configuration.webSocketMaxMessage,
                                     maxQueued: server.configuration.webSocketMaxQueued, metrics: server.metrics)
        webSocket = ws
        ws.open()
        // Bytes the client sent right after its upgrade request are WebSocket frames.
        let leftover = parser.takeBufferedBytes()
        channel.setReading(true)
        if !leftover.isEmpty { leftover.withUnsafeBytes { ws.receive($0) } }
        if draining { ws.close(code: 1001, reason: "server shutting down") }
    }
}

/// The IMF-fixdate for the Date header, formatted at most once per second.
enum HTTPDate {
    private static let cache = Mutex<(second: Int, text: String)>((0, ""))

    static func now() -> String {
        var t = time_t(0)
        time(&t)
        let second = Int(t)
        if let hit = cache.withLock({ $0.second == second ? $0.text : nil }) { return hit }
        var tmv = tm()
        gmtime_r(&t, &tmv)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let text = String(format: "%@, %02d %@ %04d %02d:%02d:%02d GMT", days[Int(tmv.tm_wday)], tmv.tm_mday, months[Int(tmv.tm_mon)],
                          tmv.tm_year + 1900, tmv.tm_hour, tmv.tm_min, tmv.tm_sec)
        cache.withLock { $0 = (second, text) }
        return text
    }
}
