import Runtime
import Wire

/// A SIP registrar (RFC 3261 §10.3) as a value: REGISTER in, a decision out, bindings kept with
/// their expiry. Devices authenticate with digest against a stored HA1 per (realm, username); the
/// realm is the domain of the address of record (an application ID or the operator's domain).
///
/// Bounded: at most `maxBindingsPerAOR` contacts per address and `maxBindings` overall (503 beyond).
public struct Registrar: Sendable {
    public var minExpires = 60
    public var maxExpires = 3600
    public var defaultExpires = 3600
    public var maxBindingsPerAOR = 8
    public var maxBindings = 100_000
    private var secret: [UInt8]
    private(set) public var bindings: [String: [Binding]] = [:]
    private var count = 0

    public init(secret: [UInt8]) { self.secret = secret }

    /// Handles one REGISTER from `source`; `ha1` finds `H(user:realm:password)` (MD5) for (realm, username).
    public mutating func register(_ request: SIPMessage, from source: SIPPeer, now: Instant,
                                  ha1: (_ realm: String, _ username: String) -> String?) -> RegistrarDecision {
        guard let to = try? request.to(), let user = to.uri.user, !user.isEmpty else {
            return RegistrarDecision(status: 400, reason: "To needs a user")
        }
        let realm = to.uri.host.lowercased()
        let aor = user + "@" + realm
        let verifier = DigestVerifier(realm: realm, secret: secret, algorithm: .md5, nonceLifetime: .seconds(300))
        let challenge = RegistrarDecision(status: 401, headers: [(SIPHeaderName.wwwAuthenticate, verifier.challenge(now: now).description)])
        guard let header = request.headers[SIPHeaderName.authorization] else { return challenge }
        guard let credentials = try? DigestCredentials.parse(header) else { return RegistrarDecision(status: 400, reason: "bad Authorization") }
        switch verifier.verify(credentials, method: .register, now: now, ha1: { ha1(realm, $0) }) {
        case .rejected:
            return challenge
        case .stale:
            return RegistrarDecision(status: 401, headers: [(SIPHeaderName.wwwAuthenticate, verifier.challenge(now: now, stale: true).description)])
        case .authorized(let username):
            // A user registers only their own address of record.
            guard username == user else { return RegistrarDecision(status: 403, reason: "username does not own this address") }
        }
        expire(now: now)
        let callID = request.callID ?? ""
        let sequence = (try? request.cseq().sequence) ?? 0
        let headerExpires = request.headers[SIPHeaderName.expires].flatMap { Int(Substring($0).trimmingSpaces) }
        if request.isContactWildcard {
            guard headerExpires == 0 else { return RegistrarDecision(status: 400, reason: "Contact * needs Expires: 0") }
            count -= bindings[aor]?.count ?? 0
            bindings[aor] = nil
            return RegistrarDecision(status: 200)
        }
        guard let contacts = try? request.contacts() else { return RegistrarDecision(status: 400, reason: "bad Contact") }
        var list = bindings[aor] ?? []
        for contact in contacts {
            let asked = contact.parameters["expires"].flatMap { Int($0) } ?? headerExpires ?? defaultExpires
            if asked > 0 && asked < minExpires {
                return RegistrarDecision(status: 423, headers: [("Min-Expires", String(minExpires))])
            }
            let seconds = min(asked, maxExpires)
            if let i = list.firstIndex(where: { $0.contact == contact.uri }) {
                // §10.3 step 7: an older request of the same Call-ID must not undo a newer one.
                if list[i].callID == callID && sequence <= list[i].sequence { return RegistrarDecision(status: 500, reason: "out of order") }
                if seconds == 0 { list.remove(at: i); count -= 1; continue }
                list[i].expires = now.adding(.seconds(seconds))
                list[i].source = source
                list[i].callID = callID
                list[i].sequence = sequence
            } else if seconds > 0 {
                guard list.count < maxBindingsPerAOR, count < maxBindings else {
                    return RegistrarDecision(status: 503, reason: "too many bindings")
                }
                list.append(Binding(aor: aor, contact: contact.uri, source: source, expires: now.adding(.seconds(seconds)),
                                    callID: callID, sequence: sequence))
                count += 1
            }
        }
        bindings[aor] = list.isEmpty ? nil : list
        let listed = list.map { b -> (name: String, value: String) in
            let left = b.expires.nanoseconds > now.nanoseconds ? (b.expires.nanoseconds - now.nanoseconds) / 1_000_000_000 : 0
            return (SIPHeaderName.contact, "<\(b.contact)>;expires=\(left)")
        }
        return RegistrarDecision(status: 200, headers: listed, aor: aor)
    }

    /// Bindings kept from before a restart (their expiry already converted to this process's clock);
    /// expired ones and those over the limits are left out.
    public mutating func restore(_ saved: [Binding], now: Instant) {
        for b in saved where b.expires > now && count < maxBindings {
            var list = bindings[b.aor] ?? []
            guard list.count < maxBindingsPerAOR, !list.contains(where: { $0.contact == b.contact }) else { continue }
            list.append(b)
            bindings[b.aor] = list
            count += 1
        }
    }

    /// Current contacts of `user@domain`.
    public func lookup(_ aor: String, now: Instant) -> [Binding] {
        (bindings[aor.lowercasedDomain] ?? []).filter { $0.expires > now }
    }

    /// Whether a live binding's REGISTER came from `host` (registered devices may send requests).
    public func isRegistered(host: String, now: Instant) -> Bool {
        bindings.values.contains { $0.contains { $0.source.host == host && $0.expires > now } }
    }

    public var bindingCount: Int { count }

    public mutating func expire(now: Instant) {
        for (aor, list) in bindings {
            let live = list.filter { $0.expires > now }
            if live.count != list.count {
                count -= list.count - live.count
                bindings[aor] = live.isEmpty ? nil : live
            }
        }
    }
}

extension String {
    /// `user@Domain` with the domain lower-cased (users are case-sensitive, hosts are not).
    var lowercasedDomain: String {
        guard let at = lastIndex(of: "@") else { return self }
        return String(self[..<at]) + "@" + self[index(after: at)...].lowercased()
    }
}
