import Foundation
import Runtime
import Synchronization
import Wire

/// Delivers every conversation event to its application's `rtc.event_url`, asynchronously, from a bounded
/// queue, with retries and exponential backoff. Overflow and exhausted retries are counted in /metrics.
///
/// Events are spread over `concurrency` lanes by conversation; each lane delivers one request at a time,
/// so a receiver sees a conversation's events in id order (a retrying event holds back the ones after it).
public final class WebhookDispatcher: ConversationEventSink, Sendable {
    public struct Settings: Sendable {
        public var capacity = 10_000
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
    private let lanes: [(queue: AsyncStream<ConversationEvent>, input: AsyncStream<ConversationEvent>.Continuation)]
    private let workers = Mutex<[Task<Void, Never>]>([])

    public init(client: HTTPClient, applications: Applications, settings: Settings = Settings(), metrics: Metrics = .shared) {
        self.client = client
        self.applications = applications
        self.settings = settings
        self.metrics = metrics
        let n = max(1, settings.concurrency)
        lanes = (0..<n).map { _ in
            let (queue, input) = AsyncStream.makeStream(of: ConversationEvent.self,
                                                        bufferingPolicy: .bufferingOldest(max(1, settings.capacity / n)))
            return (queue, input)
        }
        metrics.increment("switchboard_webhook_dropped_total", by: 0, help: "Webhook deliveries dropped because the queue was full.")
        metrics.increment("switchboard_webhook_failed_total", by: 0, help: "Webhook deliveries abandoned after every retry failed.")
        metrics.increment("switchboard_webhook_delivered_total", by: 0, help: "Webhook deliveries answered with 2xx.")
    }

    public func start() {
        let tasks = lanes.map { lane in
            Task { [self] in
                for await event in lane.queue { await deliverWithRetry(event) }
            }
        }
        workers.withLock { $0 = tasks }
    }

    public func stop() {
        for lane in lanes { lane.input.finish() }
    }

    public func deliver(_ event: ConversationEvent, recipients: [String]) {
        var h: UInt32 = 2_166_136_261
        for b in event.conversationID.utf8 { h = (h ^ UInt32(b)) &* 16_777_619 }
        if case .dropped = lanes[Int(h % UInt32(lanes.count))].input.yield(event) {
            metrics.increment("switchboard_webhook_dropped_total")
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
