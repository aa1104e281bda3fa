import Platform
import Telephony

/// The SIP edge's view of the store: number routing and device HA1s.
struct PlatformDirectory: TelephonyDirectory {
    let core: PlatformCore

    func route(number: String) -> NumberRoute? {
        guard let n = try? core.numbers.owner(of: number) else { return nil }
        // The edge knows trunks by ID (see `edgeConfig`).
        return NumberRoute(msisdn: n.msisdn, applicationID: n.applicationID, trunk: n.trunkID)
    }

    func deviceHA1(realm: String, username: String) -> String? {
        core.sipCredentials.ha1(realm: realm, username: username)
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
