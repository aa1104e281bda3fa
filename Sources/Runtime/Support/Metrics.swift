import Foundation
import Synchronization

/// Process-wide metrics rendered as Prometheus text.
public final class Metrics: Sendable {
    public static let shared = Metrics()

    struct RequestKey: Hashable { var method: String; var route: String; var status: Int }
    private static let buckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

    private struct State {
        var requests: [RequestKey: Int] = [:]
        var latencyCounts = [Int](repeating: 0, count: Metrics.buckets.count + 1)
        var latencySum: Double = 0
        var latencyCount = 0
        var counters: [String: (help: String, value: Int)] = [:]
    }
    private let state = Mutex(State())
    public let openConnections = Atomic<Int>(0)
    public let openWebSockets = Atomic<Int>(0)
    private let gauges = Mutex<[String: (help: String, read: @Sendable () -> Double)]>([:])
    private let collectors = Mutex<[String: @Sendable () -> String]>([:])

    public init() {}

    public func recordRequest(method: String, route: String, status: Int, seconds: Double) {
        state.withLock { s in
            s.requests[RequestKey(method: method, route: route, status: status), default: 0] += 1
            let i = Self.buckets.firstIndex { seconds <= $0 } ?? Self.buckets.count
            s.latencyCounts[i] += 1
            s.latencySum += seconds
            s.latencyCount += 1
        }
    }

    /// Adds to a named counter (created on first use).
    public func increment(_ name: String, by n: Int = 1, help: String = "") {
        state.withLock { s in
            let old = s.counters[name]
            s.counters[name] = (old?.help ?? help, (old?.value ?? 0) + n)
        }
    }

    public func counter(_ name: String) -> Int { state.withLock { $0.counters[name]?.value ?? 0 } }

    /// Registers a gauge read at render time.
    public func gauge(_ name: String, help: String, _ read: @escaping @Sendable () -> Double) {
        gauges.withLock { $0[name] = (help, read) }
    }

    /// Registers (or replaces) a block of Prometheus text rendered after the built-in metrics, for
    /// families with labels that a subsystem keeps itself.
    public func collector(_ name: String, _ render: @escaping @Sendable () -> String) {
        collectors.withLock { $0[name] = render }
    }

    public func render() -> String {
        var out = ""
        let s = state.withLock { $0 }
        out += "# HELP switchboard_http_requests_total HTTP requests by method, route and status.\n"
        out += "# TYPE switchboard_http_requests_total counter\n"
        for (k, v) in s.requests.sorted(by: { ($0.key.route, $0.key.method, $0.key.status) < ($1.key.route, $1.key.method, $1.key.status) }) {
            out += "switchboard_http_requests_total{method=\"\(k.method)\",route=\"\(escape(k.route))\",status=\"\(k.status)\"} \(v)\n"
        }
        out += "# HELP switchboard_http_request_duration_seconds Time from request head to response.\n"
        out += "# TYPE switchboard_http_request_duration_seconds histogram\n"
        var cumulative = 0
        for (i, b) in Self.buckets.enumerated() {
            cumulative += s.latencyCounts[i]
            out += "switchboard_http_request_duration_seconds_bucket{le=\"\(b)\"} \(cumulative)\n"
        }
        cumulative += s.latencyCounts[Self.buckets.count]
        out += "switchboard_http_request_duration_seconds_bucket{le=\"+Inf\"} \(cumulative)\n"
        out += "switchboard_http_request_duration_seconds_sum \(s.latencySum)\n"
        out += "switchboard_http_request_duration_seconds_count \(s.latencyCount)\n"
        out += "# HELP switchboard_open_connections Open HTTP connections.\n# TYPE switchboard_open_connections gauge\n"
        out += "switchboard_open_connections \(openConnections.load(ordering: .relaxed))\n"
        out += "# HELP switchboard_websockets Open WebSocket connections.\n# TYPE switchboard_websockets gauge\n"
        out += "switchboard_websockets \(openWebSockets.load(ordering: .relaxed))\n"
        for (name, c) in s.counters.sorted(by: { $0.key < $1.key }) {
            if !c.help.isEmpty { out += "# HELP \(name) \(c.help)\n" }
            out += "# TYPE \(name) counter\n\(name) \(c.value)\n"
        }
        for (name, g) in gauges.withLock({ $0 }).sorted(by: { $0.key < $1.key }) {
            out += "# HELP \(name) \(g.help)\n# TYPE \(name) gauge\n\(name) \(g.read())\n"
        }
        for (_, c) in collectors.withLock({ $0 }).sorted(by: { $0.key < $1.key }) { out += c() }
        return out
    }

    private func escape(_ s: String) -> String { s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") }
}
