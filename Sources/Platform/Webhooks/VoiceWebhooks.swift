import Foundation
import Runtime
import Synchronization
import Wire

/// The Voice API's webhooks: the answer URL (with its fallback), callbacks whose answer may be an NCCO
/// (`input`, `notify`, synchronous `connect`), and the event URL.
///
/// Answers are awaited by the call that needs them. Events go through bounded per-leg-ordered lanes and
/// never hold a call up: a slow or dead event URL only fills its lane, and overflow is dropped and counted.
public final class VoiceWebhooks: Sendable {
    public struct Settings: Sendable {
        public var capacity = 10_000
        public var lanes = 8
        public var eventAttempts = 3
        public var firstBackoff: Duration = .milliseconds(500)
        public var eventTimeout: Duration = .seconds(5)
        /// Used when the application's webhook gives no `connection_timeout` / `socket_timeout` (ms).
        public var connectionTimeout = 1000
        public var socketTimeout = 5000
        /// The event lanes' counters: `<prefix>_delivered_total`, `_failed_total`, `_dropped_total`.
        public var metricPrefix = "switchboard_voice_event"
        public init() {}
    }

    /// A request to an application's URL: where, how, and what to send.
    public struct Target: Sendable, Equatable {
        public var url: String
        public var method: HTTPMethod
        public var connectionTimeout: Int?
        public var socketTimeout: Int?
        public init(url: String, method: HTTPMethod = .POST, connectionTimeout: Int? = nil, socketTimeout: Int? = nil) {
            self.url = url
            self.method = method
            self.connectionTimeout = connectionTimeout
            self.socketTimeout = socketTimeout
        }
        public init(_ hook: Webhook) {
            self.init(url: hook.address, method: hook.httpMethod.uppercased() == "GET" ? .GET : .POST,
                      connectionTimeout: hook.connectionTimeout, socketTimeout: hook.socketTimeout)
        }
    }

    /// Why no NCCO came back from the answer URLs.
    public struct AnswerFailure: Error, Sendable, Equatable, CustomStringConvertible {
        public var url: String
        public var reason: String
        public var description: String { "\(url): \(reason)" }
    }

    struct Delivery: Sendable {
        var lane: String
        var target: Target
        var payload: [(String, JSONValue)]
        /// Signs the request when it asks to; nil for a project without one (an account's api key).
        var application: Application?
        /// Gets the reply's JSON (nil when there is none or it failed): the event of a synchronous `connect`.
        var replied: (@Sendable (JSONValue?) -> Void)?
    }

    let settings: Settings
    let client: HTTPClient
    let metrics: Metrics
    let logger = Logger(label: "voice-webhooks")
    private let lanes: [AsyncStream<Delivery>.Continuation]
    private let streams: Mutex<[AsyncStream<Delivery>]>

    public init(client: HTTPClient, settings: Settings = Settings(), metrics: Metrics = .shared) {
        self.client = client
        self.settings = settings
        self.metrics = metrics
        var conts: [AsyncStream<Delivery>.Continuation] = []
        var streams: [AsyncStream<Delivery>] = []
        for _ in 0..<max(1, settings.lanes) {
            let (s, c) = AsyncStream.makeStream(of: Delivery.self, bufferingPolicy: .bufferingOldest(max(1, settings.capacity / max(1, settings.lanes))))
            conts.append(c)
            streams.append(s)
        }
        lanes = conts
        self.streams = Mutex(streams)
        let p = settings.metricPrefix
        metrics.increment(p + "_dropped_total", by: 0, help: "Event webhooks dropped because the queue was full.")
        metrics.increment(p + "_failed_total", by: 0, help: "Event webhooks abandoned after every retry failed.")
        metrics.increment(p + "_delivered_total", by: 0, help: "Event webhooks answered with 2xx.")
        metrics.increment("switchboard_voice_answer_failed_total", by: 0, help: "Calls whose answer and fallback answer URLs all failed.")
    }

    /// Starts the event lanes.
    public func start() {
        let taken = streams.withLock { s -> [AsyncStream<Delivery>] in defer { s = [] }; return s }
        for stream in taken {
            Task { [self] in for await d in stream { await deliver(d) } }
        }
    }

    public func stop() { for lane in lanes { lane.finish() } }

    // MARK: Events

    /// Queues an event for `target`; events of one `lane` (a leg's uuid) arrive in the order queued. With
    /// `replied`, the event's reply may carry an NCCO (a synchronous `connect`'s): it is tried once, and
    /// `replied` gets the reply's JSON, or nil when there is none, it failed or the queue was full.
    public func event(_ payload: [(String, JSONValue)], to target: Target, application: Application?, lane: String,
                      replied: (@Sendable (JSONValue?) -> Void)? = nil) {
        var h: UInt32 = 2_166_136_261
        for b in lane.utf8 { h = (h ^ UInt32(b)) &* 16_777_619 }
        let delivery = Delivery(lane: lane, target: target, payload: payload, application: application, replied: replied)
        if case .dropped = lanes[Int(h % UInt32(lanes.count))].yield(delivery) {
            metrics.increment(settings.metricPrefix + "_dropped_total")
            replied?(nil)
        }
    }

    func deliver(_ d: Delivery) async {
        if let replied = d.replied {
            let reply = await callback(d.payload, to: d.target, application: d.application)
            metrics.increment(settings.metricPrefix + ((try? reply.get()) != nil ? "_delivered_total" : "_failed_total"))
            return replied((try? reply.get()) ?? nil)
        }
        var backoff = settings.firstBackoff
        for attempt in 1...max(1, settings.eventAttempts) {
            switch await send(d.target, d.payload, application: d.application, timeout: settings.eventTimeout) {
            case .success:
                metrics.increment(settings.metricPrefix + "_delivered_total")
                return
            case .failure(let f) where !f.retryable:
                logger.warning("voice event refused", ["url": d.target.url, "reason": f.reason])
                metrics.increment(settings.metricPrefix + "_failed_total")
                return
            case .failure:
                if attempt < settings.eventAttempts {
                    try? await Task.sleep(for: backoff)
                    backoff *= 2
                }
            }
        }
        metrics.increment(settings.metricPrefix + "_failed_total")
    }

    // MARK: Answers

    /// Asks the answer URL for the call's NCCO: tried twice when it times out, resets or answers 429/503/504,
    /// then the fallback answer URL twice (with `reason` and `original_request`). The reply body is returned
    /// as JSON for the engine to validate.
    public func answer(_ payload: [(String, JSONValue)], answer: Target, fallback: Target?, application: Application) async -> Result<JSONValue, AnswerFailure> {
        var last = AnswerFailure(url: answer.url, reason: "not tried")
        for attempt in 1...2 {
            switch await send(answer, payload, application: application, timeout: timeout(answer)) {
            case .success(let body): return Self.json(body, url: answer.url)
            case .failure(let f):
                last = AnswerFailure(url: answer.url, reason: f.reason)
                if !f.retryable || attempt == 2 { break }
                continue
            }
            break
        }
        if let fallback {
            var fallbackPayload = payload
            fallbackPayload.append(("reason", .string(last.reason)))
            fallbackPayload.append(("original_request", ["url": .string(answer.url), "method": .string(answer.method.rawValue)]))
            for attempt in 1...2 {
                switch await send(fallback, fallbackPayload, application: application, timeout: timeout(fallback)) {
                case .success(let body): return Self.json(body, url: fallback.url)
                case .failure(let f):
                    last = AnswerFailure(url: fallback.url, reason: f.reason)
                    if !f.retryable || attempt == 2 { break }
                    continue
                }
                break
            }
        }
        metrics.increment("switchboard_voice_answer_failed_total")
        return .failure(last)
    }

    /// One request whose reply may carry an NCCO (`input`, `notify`, synchronous `connect`); nil body when
    /// the reply is not JSON. Failures are reported, not retried: the call goes on.
    public func callback(_ payload: [(String, JSONValue)], to target: Target, application: Application?) async -> Result<JSONValue?, AnswerFailure> {
        switch await send(target, payload, application: application, timeout: timeout(target)) {
        case .success(let body): return .success(body.isEmpty ? nil : try? JSONParser.parse(body))
        case .failure(let f): return .failure(AnswerFailure(url: target.url, reason: f.reason))
        }
    }

    static func json(_ body: [UInt8], url: String) -> Result<JSONValue, AnswerFailure> {
        do { return .success(try JSONParser.parse(body)) } catch { return .failure(AnswerFailure(url: url, reason: "the answer is not JSON")) }
    }

    func timeout(_ t: Target) -> Duration {
        .milliseconds((t.connectionTimeout ?? settings.connectionTimeout) + (t.socketTimeout ?? settings.socketTimeout))
    }

    struct SendFailure: Error {
        var reason: String
        var retryable: Bool
    }

    /// GET puts the payload in the query (in order); POST sends it as JSON. Signed when the application (if any) asks.
    func send(_ target: Target, _ payload: [(String, JSONValue)], application: Application?, timeout: Duration) async -> Result<[UInt8], SendFailure> {
        let body = Self.orderedJSON(payload)
        var headers: HTTPHeaders = ["Accept": "application/json"]
        let request: HTTPClientRequest
        if target.method == .GET {
            let query = FormDecoding.encode(payload.map { ($0.0, Self.queryValue($0.1)) })
            if let application, application.signedCallbacks {
                let hashed = Self.orderedJSON(payload.map { ($0.0, JSONValue.string(Self.queryValue($0.1))) })
                if let auth = WebhookSigner.authorization(body: hashed, application: application) { headers["Authorization"] = auth }
            }
            request = HTTPClientRequest(method: .GET, url: target.url + (target.url.contains("?") ? "&" : "?") + query, headers: headers)
        } else {
            headers["Content-Type"] = "application/json"
            if let application, application.signedCallbacks, let auth = WebhookSigner.authorization(body: body, application: application) { headers["Authorization"] = auth }
            request = HTTPClientRequest(method: .POST, url: target.url, headers: headers, body: body)
        }
        do {
            let response = try await client.execute(request, timeout: timeout)
            if (200..<300).contains(response.status) { return .success(response.body) }
            return .failure(SendFailure(reason: "HTTP \(response.status)", retryable: [429, 503, 504].contains(response.status)))
        } catch HTTPClientError.timeout {
            return .failure(SendFailure(reason: "timed out", retryable: true))
        } catch {
            return .failure(SendFailure(reason: "\(error)", retryable: true))
        }
    }

    /// Query values: strings as they are, anything else as its JSON text.
    static func queryValue(_ v: JSONValue) -> String {
        if case .string(let s) = v { return s }
        return String(decoding: orderedJSON([("", v)]).dropFirst(4).dropLast(), as: UTF8.self)
    }

    /// A JSON object with its keys in the given order and no whitespace.
    static func orderedJSON(_ fields: [(String, JSONValue)]) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var out: [UInt8] = [UInt8(ascii: "{")]
        for (i, (k, v)) in fields.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: (try? encoder.encode(k)) ?? Data("\"\"".utf8))
            out.append(UInt8(ascii: ":"))
            out.append(contentsOf: (try? encoder.encode(v)) ?? Data("null".utf8))
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
