import Foundation
import Runtime
import Synchronization
import Wire

/// Delivers every conversation event to its application's `rtc.event_url`, asynchronously, from a bounded
/// queue, with retries and exponential backoff. Overflow and exhausted retries are counted in /metrics.
///
/// Each application has its own `concurrency` lanes (made on its first event), and its events are spread
/// over them by conversation; each lane delivers one request at a time, so a receiver sees a conversation's
/// events in id order (a retrying event holds back the ones after it). Lanes are per application so that
/// one application's slow or failing receiver holds back only its own webhooks, never another's.
public final class WebhookDispatcher: ConversationEventSink, Sendable {
    public struct Settings: Sendable {
        /// Events waiting per application, over all its lanes.
        public var capacity = 10_000
        /// Lanes (requests in flight) per application.
        public var concurrency = 8
        public var attempts = 5
        public var firstBackoff: Duration = .milliseconds(500)
        public var timeout: Duration = .seconds(5)
        public init() {}
    }

    let settings: Settings
    let client: HTTPClient
    let applications: Applications
    let metrics: Metrics
    let logger = Logger(label: "webhooks")
    private typealias Lane = (queue: AsyncStream<ConversationEvent>, input: AsyncStream<ConversationEvent>.Continuation)
    private struct State {
        /// Application id → its lanes.
        var lanes: [String: [Lane]] = [:]
        var workers: [Task<Void, Never>] = []
        var started = false
        var stopped = false
    }
    private let state = Mutex(State())

    public init(client: HTTPClient, applications: Applications, settings: Settings = Settings(), metrics: Metrics = .shared) {
        self.client = client
        self.applications = applications
        self.settings = settings
        self.metrics = metrics
        metrics.increment("switchboard_webhook_dropped_total", by: 0, help: "Webhook deliveries dropped because the queue was full.")
        metrics.increment("switchboard_webhook_failed_total", by: 0, help: "Webhook deliveries abandoned after every retry failed.")
        metrics.increment("switchboard_webhook_delivered_total", by: 0, help: "Webhook deliveries answered with 2xx.")
    }

    public func start() {
        state.withLock { s in
            s.started = true
            for lanes in s.lanes.values { s.workers += lanes.map(worker) }
        }
    }

    public func stop() {
        state.withLock { s in
            s.stopped = true
            for lanes in s.lanes.values { for lane in lanes { lane.input.finish() } }
        }
    }

    public func deliver(_ event: ConversationEvent, recipients: [String]) {
        var h: UInt32 = 2_166_136_261
        for b in event.conversationID.utf8 { h = (h ^ UInt32(b)) &* 16_777_619 }
        let lane: Lane? = state.withLock { s in
            guard !s.stopped else { return nil }
            if let lanes = s.lanes[event.applicationID] { return lanes[Int(h % UInt32(lanes.count))] }
            let lanes = makeLanes()
            s.lanes[event.applicationID] = lanes
            if s.started { s.workers += lanes.map(worker) }
            return lanes[Int(h % UInt32(lanes.count))]
        }
        if case .dropped = lane?.input.yield(event) {
            metrics.increment("switchboard_webhook_dropped_total")
        }
    }

    /// One application's lanes; each holds at most `capacity / concurrency` waiting events.
    private func makeLanes() -> [Lane] {
        let n = max(1, settings.concurrency)
        return (0..<n).map { _ in
            let (queue, input) = AsyncStream.makeStream(of: ConversationEvent.self,
                                                        bufferingPolicy: .bufferingOldest(max(1, settings.capacity / n)))
            return (queue, input)
        }
    }

    private func worker(_ lane: Lane) -> Task<Void, Never> {
        Task { [self] in
            for await event in lane.queue { await deliverWithRetry(event) }
        }
    }

    func deliverWithRetry(_ event: ConversationEvent) async {
        guard let app = try? applications.get(id: event.applicationID), let hook = app.rtcEvent else { return }
        var payload = event.json
        if case .object(var o) = payload {
            o["application_id"] = .string(app.id)
            payload = .object(o)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let body = try? [UInt8](encoder.encode(payload)) else { return }
        var backoff = settings.firstBackoff
        for attempt in 1...settings.attempts {
            var headers: HTTPHeaders = ["Content-Type": "application/json"]
            if app.signedCallbacks, let auth = WebhookSigner.authorization(body: body, application: app) { headers["Authorization"] = auth }
            let request: HTTPClientRequest
            if hook.httpMethod.uppercased() == "GET" {
                request = HTTPClientRequest(method: .GET, url: hook.address + (hook.address.contains("?") ? "&" : "?")
                                            + "type=\(event.type)&conversation_id=\(event.conversationID)&id=\(event.id)", headers: headers)
            } else {
                request = HTTPClientRequest(method: .POST, url: hook.address, headers: headers, body: body)
            }
            do {
                let response = try await client.execute(request, timeout: settings.timeout)
                if (200..<300).contains(response.status) {
                    metrics.increment("switchboard_webhook_delivered_total")
                    return
                }
                if (400..<500).contains(response.status) && response.status != 429 && response.status != 408 {
                    logger.warning("webhook refused", ["url": hook.address, "status": response.status, "event": event.type])
                    metrics.increment("switchboard_webhook_failed_total")
                    return
                }
            } catch {
                logger.debug("webhook attempt failed", ["url": hook.address, "attempt": attempt, "error": "\(error)"])
            }
            if attempt < settings.attempts {
                try? await Task.sleep(for: backoff)
                backoff *= 2
            }
        }
        metrics.increment("switchboard_webhook_failed_total")
        logger.warning("webhook abandoned", ["url": hook.address, "event": event.type, "attempts": settings.attempts])
    }
}
