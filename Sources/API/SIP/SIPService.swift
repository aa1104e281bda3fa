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
    /// The development test phone's own user agent, when it runs.
    let testPhone = Mutex<SIPEdge?>(nil)
    /// Held while the trunk list is read from the store and put in force.
    let trunkUpdates = Mutex<Void>(())
    let host: String

    init(core: PlatformCore, host: String, port: UInt16, rtpPorts: ClosedRange<UInt16>, maxCalls: Int = 0, maxPendingInvites: Int = 1000) {
        self.core = core
        self.host = host
        self.rtpPorts = rtpPorts
        let trunks = ((try? core.sipTrunks.all()) ?? []).map(\.edgeConfig)
        edge = SIPEdge(config: UserAgentConfig(host: host, port: port, trunks: trunks, maxCalls: maxCalls, maxPendingInvites: maxPendingInvites),
                       directory: PlatformDirectory(core: core))
    }

    /// The bound SIP port (UDP and TCP), nil before start.
    public var boundPort: UInt16? { port.withLock { $0 } }

    /// Binds the edge; inbound calls go to `inbound` (the Voice API). In development mode the test phone
    /// answers its number on a loopback trunk of `apiKey`'s account (see `TestPhone`).
    func start(metrics: Metrics, development: Bool, inbound: (any IncomingCallHandler)?, apiKey: String,
               tls: SIPTLSConfig? = nil) async throws -> UInt16 {
        let bound = try await edge.start(tls: tls)
        if let tls, edge.tlsPort == nil {
            logger.warning("SIP over TLS is off: its default port could not be bound (give --sip-tls-port to choose one, 0 to silence this)",
                           ["port": "\(tls.port)"])
        }
        let environment = ProcessInfo.processInfo.environment
        if development, environment["SWITCHBOARD_DEV_SIP_ECHO"] == "1" {
            edge.setHandler(TestPhone(edge: edge, pool: RTPPortPool(range: rtpPorts), host: host, answerAll: true))
            logger.warning("development: every routed inbound SIP call is answered with an RTP echo (SWITCHBOARD_DEV_SIP_ECHO)")
        } else {
            edge.setHandler(inbound)
            if Self.runsTestPhone(development: development) {
                do { try await startTestPhone(apiKey: apiKey, serverPort: bound) } catch {
                    logger.warning("development: no test phone", ["error": "\(error)"])
                }
            }
        }
        port.withLock { $0 = bound }
        core.sipTrunks.onChange { [self] in applyTrunks() }
        let (logger, edge) = (self.logger, self.edge)
        edge.onTrunkChange { status in
            logger.info("trunk", ["trunk": status.name, "up": status.up.map { "\($0)" } ?? "unknown", "registration": "\(status.registration)"])
        }
        metrics.collector("sip") { Self.render(edge.snapshot) }
        metrics.collector("phone") { PhoneLineCounters.render() }
        return bound
    }

    /// Puts the stored trunks in force on the edge, returning once they are. Reading the list and applying it
    /// are one step: two changes at once cannot leave the older list in force.
    func applyTrunks() {
        trunkUpdates.withLock { _ in edge.updateTrunks(((try? core.sipTrunks.all()) ?? []).map(\.edgeConfig)) }
    }

    /// Whether this start runs the development test phone (`SWITCHBOARD_DEV_TEST_PHONE=0` turns it off).
    static func runsTestPhone(development: Bool) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return development && environment["SWITCHBOARD_DEV_SIP_ECHO"] != "1" && environment["SWITCHBOARD_DEV_TEST_PHONE"] != "0"
    }

    func stop() async {
        if let phone = testPhone.withLock({ $0 }) { await phone.stop() }
        await edge.stop()
    }

    /// The development test phone: its own SIP user agent on a free loopback port, the `dev-loopback`
    /// trunk pointing at it, and its number on that trunk.
    private func startTestPhone(apiKey: String, serverPort: UInt16) async throws {
        let server = TrunkConfig(name: "switchboard", host: host, port: serverPort, allowedSources: [host])
        let phone = SIPEdge(config: UserAgentConfig(host: host, port: 0, trunks: [server]), tcp: false, directory: TestPhone.Directory())
        let port = try await phone.start()
        testPhone.withLock { $0 = phone }
        phone.setHandler(TestPhone(edge: phone, pool: RTPPortPool(range: rtpPorts), host: host, answerAll: false))
        try installTestPhone(apiKey: apiKey, port: port)
        applyTrunks()
        logger.info("development: test phone \(TestPhone.number) on trunk \(TestPhone.trunkName) (\(host):\(port)) says a prompt, then echoes")
    }

    /// The loopback trunk (to the test phone's port) and the test number on it, made or brought up to date.
    private func installTestPhone(apiKey: String, port: UInt16) throws {
        let input = SIPTrunkInput(name: TestPhone.trunkName, host: host, port: Int(port), transport: "udp", allow: [host], healthInterval: 0)
        let trunk = if let existing = try core.sipTrunks.list(apiKey: apiKey).first(where: { $0.name == TestPhone.trunkName }) {
            try core.sipTrunks.update(id: existing.id, apiKey: apiKey, input: input)
        } else {
            try core.sipTrunks.create(apiKey: apiKey, input: input)
        }
        if (try? core.numbers.get(msisdn: TestPhone.number, apiKey: apiKey)) == nil {
            _ = try core.numbers.buy(apiKey: apiKey, country: "US", msisdn: TestPhone.number)
        }
        _ = try core.numbers.assignTrunk(msisdn: TestPhone.number, apiKey: apiKey, trunkID: trunk.id)
    }

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
        out += "# HELP switchboard_sip_invites_shed_total New INVITEs refused 503 with Retry-After by overload shedding, by reason (calls: the concurrent-call limit; pending: too many INVITEs unanswered).\n# TYPE switchboard_sip_invites_shed_total counter\n"
        for reason in OverloadReason.allCases {
            out += "switchboard_sip_invites_shed_total{reason=\"\(reason.rawValue)\"} \(s.statistics.shed[reason, default: 0])\n"
        }
        out += "# HELP switchboard_sip_transactions SIP transactions in progress.\n# TYPE switchboard_sip_transactions gauge\nswitchboard_sip_transactions \(s.transactions)\n"
        out += "# HELP switchboard_sip_calls SIP calls in progress.\n# TYPE switchboard_sip_calls gauge\nswitchboard_sip_calls \(s.calls)\n"
        out += "# HELP switchboard_sip_registrations Device registrations (bindings) held by the registrar.\n# TYPE switchboard_sip_registrations gauge\nswitchboard_sip_registrations \(s.bindings)\n"
        out += "# HELP switchboard_sip_tcp_connections Open SIP TCP connections.\n# TYPE switchboard_sip_tcp_connections gauge\nswitchboard_sip_tcp_connections \(s.connections)\n"
        out += "# HELP switchboard_sip_tls_connections Open SIP TLS connections (handshaking or established).\n# TYPE switchboard_sip_tls_connections gauge\nswitchboard_sip_tls_connections \(s.tlsConnections)\n"
        out += "# HELP switchboard_sip_tls_handshake_failures_total SIP TLS connections closed before their handshake finished, by reason (failed: a bad or broken handshake; timeout: not finished in time).\n# TYPE switchboard_sip_tls_handshake_failures_total counter\n"
        out += "switchboard_sip_tls_handshake_failures_total{reason=\"failed\"} \(s.tlsHandshakeFailures)\n"
        out += "switchboard_sip_tls_handshake_failures_total{reason=\"timeout\"} \(s.tlsHandshakeTimeouts)\n"
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
