import Platform
import Runtime
import Telephony

/// The SIP edge's view of the store: number routing and device HA1s.
struct PlatformDirectory: TelephonyDirectory {
    let core: PlatformCore
    let logger = Logger(label: "sip")

    func route(number: String) -> NumberRoute? {
        guard let n = try? core.numbers.owner(of: number) else { return nil }
        // The edge knows trunks by ID (see `edgeConfig`).
        return NumberRoute(msisdn: n.msisdn, applicationID: n.applicationID, trunk: n.trunkID)
    }

    func deviceHA1(realm: String, username: String) -> String? {
        core.sipCredentials.ha1(realm: realm, username: username)
    }

    func saveBindings(aor: String, _ bindings: [SavedBinding]) {
        let rows = bindings.map {
            SIPBindings.Row(aor: $0.aor, contact: $0.contact, sourceHost: $0.sourceHost, sourcePort: Int($0.sourcePort), transport: $0.transport,
                            expiresAtMillis: $0.expiresAtMillis, callID: $0.callID, sequence: Int64($0.sequence))
        }
        do { try core.sipBindings.replace(aor: aor, with: rows) } catch { logger.error("registration not stored", ["aor": aor, "error": "\(error)"]) }
    }

    func savedBindings() -> [SavedBinding] {
        ((try? core.sipBindings.live()) ?? []).map {
            SavedBinding(aor: $0.aor, contact: $0.contact, sourceHost: $0.sourceHost, sourcePort: UInt16(clamping: $0.sourcePort),
                         transport: $0.transport, expiresAtMillis: $0.expiresAtMillis, callID: $0.callID, sequence: UInt32(clamping: $0.sequence))
        }
    }
}

extension SIPTrunk {
    /// The edge's configuration of this trunk; its name is unique across accounts by carrying the ID.
    var edgeConfig: TrunkConfig {
        TrunkConfig(name: id, host: host, port: UInt16(clamping: port), transport: SIPTransportKind(name: transport) ?? .udp,
                    credentials: username.map { TrunkConfig.Credentials(username: $0, password: password ?? "") },
                    allowedSources: allow, register: register, healthInterval: healthInterval)
    }
}
