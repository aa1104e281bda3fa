import Foundation
import Runtime

/// One reply or event of the Janus API: its `janus` kind, the plugin's data (JSON) and the SDP it carried.
public struct JanusReply: Sendable {
    public var kind: String
    /// `plugindata.data` as JSON; read it with `data`.
    public var pluginData: Data
    public var sdp: String?

    /// The plugin's data as a JSON object.
    public var data: [String: Any] {
        (try? JSONSerialization.jsonObject(with: pluginData)) as? [String: Any] ?? [:]
    }

    /// A plugin-level error (`error_code`, `error`), if the data carries one.
    var pluginError: String? {
        let d = data
        guard let code = d["error_code"] else { return nil }
        return "\(code) \(d["error"] ?? "")"
    }
}

public struct JanusError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ d: String) { description = d }
}

/// A Janus API session over its HTTP transport: create, attach plugin handles, send plugin messages
/// and trickle, and the long poll that brings asynchronous events back. Events are matched to their
/// request by transaction; a keep-alive goes out every 25 s (Janus drops a session after 60 s of silence).
///
/// One session carries every handle of a load run: the session is Janus's signalling transport, not
/// part of the media path, and one long poll keeps the client's HTTP traffic small.
public actor JanusSession {
    /// A plugin handle on this session.
    public struct Handle: Sendable, Hashable {
        public let id: UInt64
    }

    private let base: String
    private let http: HTTPClient
    private var sessionID: UInt64 = 0
    private var counter = 0
    /// Transactions sent whose events may arrive before the request's own reply.
    private var expected: Set<String> = []
    private var arrived: [String: JanusReply] = [:]
    private var waiters: [String: CheckedContinuation<JanusReply, Error>] = [:]
    private var closed = false
    private var tasks: [Task<Void, Never>] = []
    /// Hang-ups and other failures Janus reported on a handle, for the caller's error message.
    public private(set) var hangups: [String] = []

    /// `url` is Janus's HTTP API root, e.g. `http://198.18.0.1:8088/janus`.
    public init(url: String, http: HTTPClient) {
        base = url.hasSuffix("/") ? String(url.dropLast()) : url
        self.http = http
    }

    /// Creates the session and starts its long poll and keep-alives.
    public func start() async throws {
        let reply = try await post(base, ["janus": "create"])
        guard let data = reply["data"] as? [String: Any], let id = (data["id"] as? NSNumber)?.uint64Value else {
            throw JanusError("create: no session id in \(reply)")
        }
        sessionID = id
        tasks.append(Task { await self.poll() })
        tasks.append(Task { await self.keepAlive() })
    }

    /// Attaches a plugin (`janus.plugin.videoroom`, `janus.plugin.audiobridge`).
    public func attach(_ plugin: String) async throws -> Handle {
        let reply = try await post("\(base)/\(sessionID)", ["janus": "attach", "plugin": plugin])
        guard let data = reply["data"] as? [String: Any], let id = (data["id"] as? NSNumber)?.uint64Value else {
            throw JanusError("attach \(plugin): no handle id")
        }
        return Handle(id: id)
    }

    /// Sends a plugin message (with an SDP offer or answer when `jsep` is set) and returns the plugin's
    /// synchronous reply, or the event it sends later for an asynchronous request.
    public func message(_ handle: Handle, _ body: [String: any Sendable], jsep: (type: String, sdp: String)? = nil) async throws -> JanusReply {
        let transaction = nextTransaction()
        var request: [String: Any] = ["janus": "message", "transaction": transaction, "body": body]
        if let jsep { request["jsep"] = ["type": jsep.type, "sdp": jsep.sdp] }
        expected.insert(transaction)
        let reply: [String: Any]
        do { reply = try await post("\(base)/\(sessionID)/\(handle.id)", request, transaction: transaction) } catch {
            expected.remove(transaction)
            throw error
        }
        let result: JanusReply
        switch reply["janus"] as? String {
        case "success":
            expected.remove(transaction)
            arrived.removeValue(forKey: transaction)
            result = Self.reply(reply)
        case "ack":
            result = try await event(transaction)
        default:
            expected.remove(transaction)
            throw JanusError("message \(body["request"] ?? "?"): \(Self.describeError(reply))")
        }
        if let error = result.pluginError { throw JanusError("\(body["request"] ?? "?"): \(error)") }
        return result
    }

    /// Trickles one of this side's candidates (`candidate:…`), or with nil the end of candidates.
    ///
    /// Janus in ICE-lite mode fails a component whose candidates are complete before any check has
    /// arrived, so the end goes out once this side is connected, as a browser's usually does.
    public func trickle(_ handle: Handle, candidate: String?) async throws {
        let value: [String: Any] = candidate.map { ["sdpMid": "0", "sdpMLineIndex": 0, "candidate": $0] } ?? ["completed": true]
        let reply = try await post("\(base)/\(sessionID)/\(handle.id)", ["janus": "trickle", "candidate": value])
        guard reply["janus"] as? String == "ack" else { throw JanusError("trickle: \(Self.describeError(reply))") }
    }

    /// Destroys the session (and with it every handle) and stops polling.
    public func close() async {
        guard !closed else { return }
        closed = true
        _ = try? await post("\(base)/\(sessionID)", ["janus": "destroy"])
        for task in tasks { task.cancel() }
        for (_, waiter) in waiters { waiter.resume(throwing: JanusError("session closed")) }
        waiters.removeAll()
    }

    // MARK: Transport

    private func nextTransaction() -> String {
        counter += 1
        return "t\(counter)"
    }

    private func post(_ url: String, _ object: [String: Any], transaction: String? = nil) async throws -> [String: Any] {
        var object = object
        object["transaction"] = transaction ?? nextTransaction()
        let body = try JSONSerialization.data(withJSONObject: object)
        let response = try await http.execute(
            HTTPClientRequest(method: .POST, url: url, headers: ["content-type": "application/json"], body: Array(body)), timeout: .seconds(20))
        guard response.status == 200,
              let reply = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else {
            throw JanusError("\(url): HTTP \(response.status) \(response.text.prefix(200))")
        }
        if reply["janus"] as? String == "error" { throw JanusError(Self.describeError(reply)) }
        return reply
    }

    /// The event for an acknowledged request: already arrived, or the next one the poll brings.
    private func event(_ transaction: String) async throws -> JanusReply {
        if let reply = arrived.removeValue(forKey: transaction) {
            expected.remove(transaction)
            return reply
        }
        let timeout = Task {
            try? await Task.sleep(for: .seconds(20))
            self.fail(transaction, JanusError("no event for \(transaction) within 20 s"))
        }
        defer { timeout.cancel() }
        return try await withCheckedThrowingContinuation { waiters[transaction] = $0 }
    }

    private func fail(_ transaction: String, _ error: Error) {
        expected.remove(transaction)
        waiters.removeValue(forKey: transaction)?.resume(throwing: error)
    }

    /// Long poll: up to 50 events per request; Janus answers after 30 s with a keep-alive when idle.
    private func poll() async {
        while !closed && !Task.isCancelled {
            guard let response = try? await http.execute(
                HTTPClientRequest(url: "\(base)/\(sessionID)?maxev=50"), timeout: .seconds(45)) else {
                try? await Task.sleep(for: .milliseconds(100))
                continue
            }
            let parsed = try? JSONSerialization.jsonObject(with: Data(response.body))
            let events = (parsed as? [[String: Any]]) ?? (parsed as? [String: Any]).map { [$0] } ?? []
            for event in events { deliver(event) }
        }
    }

    private func deliver(_ event: [String: Any]) {
        let kind = event["janus"] as? String ?? ""
        if kind == "hangup" || kind == "detached" {
            hangups.append("\(kind) on handle \(event["sender"] ?? "?"): \(event["reason"] ?? "")")
        }
        guard kind == "event" || kind == "error", let transaction = event["transaction"] as? String else { return }
        let reply = kind == "error" ? JanusReply(kind: "error", pluginData: Self.errorData(event), sdp: nil) : Self.reply(event)
        if let waiter = waiters.removeValue(forKey: transaction) {
            expected.remove(transaction)
            waiter.resume(returning: reply)
        } else if expected.contains(transaction) {
            arrived[transaction] = reply
        }
    }

    private func keepAlive() async {
        while !closed && !Task.isCancelled {
            try? await Task.sleep(for: .seconds(25))
            if closed || Task.isCancelled { return }
            _ = try? await post("\(base)/\(sessionID)", ["janus": "keepalive"])
        }
    }

    private static func reply(_ object: [String: Any]) -> JanusReply {
        let plugin = (object["plugindata"] as? [String: Any])?["data"] as? [String: Any] ?? [:]
        let data = (try? JSONSerialization.data(withJSONObject: plugin)) ?? Data("{}".utf8)
        let sdp = (object["jsep"] as? [String: Any])?["sdp"] as? String
        return JanusReply(kind: object["janus"] as? String ?? "", pluginData: data, sdp: sdp)
    }

    private static func errorData(_ object: [String: Any]) -> Data {
        let error = object["error"] as? [String: Any] ?? [:]
        let plugin: [String: Any] = ["error_code": error["code"] ?? -1, "error": error["reason"] ?? "?"]
        return (try? JSONSerialization.data(withJSONObject: plugin)) ?? Data()
    }

    private static func describeError(_ object: [String: Any]) -> String {
        guard let error = object["error"] as? [String: Any] else { return "unexpected reply \(object["janus"] ?? "?")" }
        return "Janus error \(error["code"] ?? "?"): \(error["reason"] ?? "")"
    }
}
