import Foundation
import Platform
import Runtime
import Synchronization
import Telephony

/// The telephony edge inside the server: starts with it, stops with it, follows trunk changes in
/// the store, and publishes its counters on `/metrics`.
public final class SIPService: Sendable {
    public let edge: SIPEdge
    public let rtpPorts: ClosedRange<UInt16>
    let core: PlatformCore
    let logger = Logger(label: "sip")
    let port = Mutex<UInt16?>(nil)
    let host: String

    init(core: PlatformCore, host: String, port: UInt16, rtpPorts: ClosedRange<UInt16>) {
        self.core = core
        self.host = host
        self.rtpPorts = rtpPorts
        let trunks = ((try? core.sipTrunks.all()) ?? []).map(\.edgeConfig)
        edge = SIPEdge(config: UserAgentConfig(host: host, port: port, trunks: trunks), directory: PlatformDirectory(core: core))
    }

    /// The bound SIP port (UDP and TCP), nil before start.
    public var boundPort: UInt16? { port.withLock { $0 } }

    func start(metrics: Metrics, development: Bool) async throws -> UInt16 {
        let bound = try await edge.start()
        if development, ProcessInfo.processInfo.environment["SWITCHBOARD_DEV_SIP_ECHO"] == "1" {
            edge.setHandler(EchoAnswerer(edge: edge, pool: RTPPortPool(range: rtpPorts), host: host))
            logger.warning("development: every routed inbound SIP call is answered with an RTP echo (SWITCHBOARD_DEV_SIP_ECHO)")
        }
        port.withLock { $0 = bound }
        let edge = self.edge
        let core = self.core
        core.sipTrunks.onChange { edge.updateTrunks(((try? core.sipTrunks.all()) ?? []).map(\.edgeConfig)) }
        let logger = self.logger
        edge.onTrunkChange { status in
            logger.info("trunk", ["trunk": status.name, "up": status.up.map { "\($0)" } ?? "unknown", "registration": "\(status.registration)"])
        }
        metrics.collector("sip") { Self.render(edge.snapshot) }
        return bound
    }

    func stop() async { await edge.stop() }

    /// The trunk's live status (health and registration), by trunk ID.
    public func status(ofTrunk id: String) -> TrunkStatus? { edge.snapshot.trunks.first { $0.name == id } }

    static func render(_ s: SIPEndpointSnapshot) -> String {
        var out = "# HELP switchboard_sip_requests_total SIP requests by direction and method.\n# TYPE switchboard_sip_requests_total counter\n"
        for (k, v) in s.statistics.requests.sorted(by: { ($0.key.direction, $0.key.method) < ($1.key.direction, $1.key.method) }) {
            out += "switchboard_sip_requests_total{direction=\"\(k.direction)\",method=\"\(k.method)\"} \(v)\n"
        }
        out += "# HELP switchboard_sip_responses_total SIP responses by direction, method and status code.\n# TYPE switchboard_sip_responses_total counter\n"
        for (k, v) in s.statistics.responses.sorted(by: { ($0.key.direction, $0.key.method, $0.key.status) < ($1.key.direction, $1.key.method, $1.key.status) }) {
            out += "switchboard_sip_responses_total{direction=\"\(k.direction)\",method=\"\(k.method)\",code=\"\(k.status)\"} \(v)\n"
        }
        out += "# HELP switchboard_sip_transactions SIP transactions in progress.\n# TYPE switchboard_sip_transactions gauge\nswitchboard_sip_transactions \(s.transactions)\n"
        out += "# HELP switchboard_sip_calls SIP calls in progress.\n# TYPE switchboard_sip_calls gauge\nswitchboard_sip_calls \(s.calls)\n"
        out += "# HELP switchboard_sip_registrations Device registrations (bindings) held by the registrar.\n# TYPE switchboard_sip_registrations gauge\nswitchboard_sip_registrations \(s.bindings)\n"
        out += "# HELP switchboard_sip_tcp_connections Open SIP TCP connections.\n# TYPE switchboard_sip_tcp_connections gauge\nswitchboard_sip_tcp_connections \(s.connections)\n"
        out += "# HELP switchboard_sip_trunk_up 1 when the trunk answers health checks, 0 when not, absent before the first check.\n# TYPE switchboard_sip_trunk_up gauge\n"
        for t in s.trunks {
            guard let up = t.up else { continue }
            out += "switchboard_sip_trunk_up{trunk=\"\(t.name)\"} \(up ? 1 : 0)\n"
        }
        out += "# HELP switchboard_sip_trunk_registered 1 when the trunk's registration is current.\n# TYPE switchboard_sip_trunk_registered gauge\n"
        for t in s.trunks where t.registration != .notRequired {
            let registered: Bool = if case .registered = t.registration { true } else { false }
            out += "switchboard_sip_trunk_registered{trunk=\"\(t.name)\"} \(registered ? 1 : 0)\n"
        }
        return out
    }
}
