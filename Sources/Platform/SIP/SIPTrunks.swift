import Foundation
import Glibc
import Store

/// The account's SIP trunks, in the store. Hosts are numeric IP addresses (no name resolution on
/// the signalling path); allow-list entries are addresses or CIDR ranges.
public final class SIPTrunks: Sendable {
    let db: any SQLStore
    let clock: any WallClock
    /// Called after every change, so the SIP edge reloads its trunk list.
    let observers = Mutex<[@Sendable () -> Void]>([])

    init(db: any SQLStore, clock: any WallClock) {
        self.db = db
        self.clock = clock
    }

    public func onChange(_ observer: @escaping @Sendable () -> Void) { observers.withLock { $0.append(observer) } }

    private func changed() { for o in observers.withLock({ $0 }) { o() } }

    public func create(apiKey: String, input: SIPTrunkInput) throws -> SIPTrunk {
        guard let host = input.host else { throw PlatformError.invalid("host is required.") }
        let now = clock.now().millis
        var t = SIPTrunk(id: UUID().uuidString.lowercased(), name: input.name ?? host, host: host,
                         port: input.port ?? (input.transport?.lowercased() == "tls" ? 5061 : 5060),
                         transport: input.transport ?? "udp", username: input.username ?? nil, password: input.password ?? nil,
                         register: input.register ?? false, allow: input.allow ?? [], healthInterval: input.healthInterval ?? 30,
                         mediaEncryption: input.mediaEncryption ?? "none", dtmf: input.dtmf ?? "rfc4733", createdAt: now, updatedAt: now)
        try Self.validate(&t)
        do {
            try db.execute("""
                INSERT INTO sip_trunks (id, api_key, name, host, port, transport, username, password, register, allow, health_interval,
                                        media_encryption, dtmf, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(t.id), .text(apiKey), .text(t.name), .text(t.host), .int(Int64(t.port)), .text(t.transport),
                      SQLValue(t.username), SQLValue(t.password), .int(t.register ? 1 : 0), .text(t.allow.joined(separator: ",")),
                      .int(Int64(t.healthInterval)), .text(t.mediaEncryption), .text(t.dtmf), .int(now), .int(now)])
        } catch {
            throw uniqueViolation(error, as: PlatformError.conflict("A trunk named \(t.name) exists."))
        }
        changed()
        return t
    }

    public func get(id: String, apiKey: String) throws -> SIPTrunk {
        guard let r = try db.queryOne("SELECT * FROM sip_trunks WHERE (id = ? OR name = ?) AND api_key = ?", [.text(id), .text(id), .text(apiKey)]) else {
            throw PlatformError.notFound("trunk")
        }
        return Self.trunk(r)
    }

    /// A trunk of any account by ID, nil when there is none: what a call on it asks of its media.
    public func find(id: String) throws -> SIPTrunk? {
        try db.queryOne("SELECT * FROM sip_trunks WHERE id = ?", [.text(id)]).map(Self.trunk)
    }

    public func list(apiKey: String) throws -> [SIPTrunk] {
        try db.query("SELECT * FROM sip_trunks WHERE api_key = ? ORDER BY name", [.text(apiKey)]).map(Self.trunk)
    }

    /// Every trunk of every account: what the SIP edge screens and registers.
    public func all() throws -> [SIPTrunk] {
        try db.query("SELECT * FROM sip_trunks ORDER BY name", []).map(Self.trunk)
    }

    public func update(id: String, apiKey: String, input: SIPTrunkInput) throws -> SIPTrunk {
        var t = try get(id: id, apiKey: apiKey)
        if let v = input.name { t.name = v }
        if let v = input.host { t.host = v }
        if let v = input.port { t.port = v }
        if let v = input.transport { t.transport = v }
        if let v = input.username { t.username = v }
        if let v = input.password { t.password = v }
        if let v = input.register { t.register = v }
        if let v = input.allow { t.allow = v }
        if let v = input.healthInterval { t.healthInterval = v }
        if let v = input.mediaEncryption { t.mediaEncryption = v }
        if let v = input.dtmf { t.dtmf = v }
        try Self.validate(&t)
        t.updatedAt = clock.now().millis
        do {
            try db.execute("""
                UPDATE sip_trunks SET name = ?, host = ?, port = ?, transport = ?, username = ?, password = ?, register = ?, allow = ?,
                                      health_interval = ?, media_encryption = ?, dtmf = ?, updated_at = ? WHERE id = ?
                """, [.text(t.name), .text(t.host), .int(Int64(t.port)), .text(t.transport), SQLValue(t.username), SQLValue(t.password),
                      .int(t.register ? 1 : 0), .text(t.allow.joined(separator: ",")), .int(Int64(t.healthInterval)), .text(t.mediaEncryption), .text(t.dtmf), .int(t.updatedAt),
                      .text(t.id)])
        } catch {
            throw uniqueViolation(error, as: PlatformError.conflict("A trunk named \(t.name) exists."))
        }
        changed()
        return t
    }

    public func delete(id: String, apiKey: String) throws {
        let t = try get(id: id, apiKey: apiKey)
        try db.execute("UPDATE numbers SET trunk_id = NULL WHERE trunk_id = ?", [.text(t.id)])
        try db.execute("DELETE FROM sip_trunks WHERE id = ?", [.text(t.id)])
        changed()
    }

    static func validate(_ t: inout SIPTrunk) throws {
        t.transport = t.transport.lowercased()
        guard !t.name.isEmpty, t.name.count <= 100, !t.name.contains(",") else { throw PlatformError.invalid("name must be 1 to 100 characters.") }
        guard isNumericAddress(t.host) else { throw PlatformError.invalid("host must be a numeric IPv4 or IPv6 address.") }
        guard (1...65535).contains(t.port) else { throw PlatformError.invalid("port must be 1-65535.") }
        guard ["udp", "tcp", "tls"].contains(t.transport) else { throw PlatformError.invalid("transport must be udp, tcp or tls.") }
        guard (0...86_400).contains(t.healthInterval) else { throw PlatformError.invalid("health_interval must be 0-86400 seconds.") }
        t.mediaEncryption = t.mediaEncryption.lowercased()
        guard ["none", "optional", "srtp", "dtls-srtp"].contains(t.mediaEncryption) else {
            throw PlatformError.invalid("media_encryption must be none, optional, srtp or dtls-srtp.")
        }
        // DTLS-SRTP's keys never travel in the signalling: any transport will do.
        if ["optional", "srtp"].contains(t.mediaEncryption) && t.transport != "tls" {
            throw PlatformError.invalid("media_encryption \(t.mediaEncryption) needs transport tls: the SRTP keys travel in the SIP messages.")
        }
        t.dtmf = t.dtmf.lowercased()
        guard ["rfc4733", "info"].contains(t.dtmf) else { throw PlatformError.invalid("dtmf must be rfc4733 or info.") }
        if t.register && (t.username ?? "").isEmpty { throw PlatformError.invalid("register needs a username and password.") }
        guard t.allow.count <= 64 else { throw PlatformError.invalid("allow takes at most 64 entries.") }
        for entry in t.allow {
            let parts = entry.split(separator: "/", maxSplits: 1)
            guard let address = parts.first, isNumericAddress(String(address)) else {
                throw PlatformError.invalid("allow entries must be addresses or CIDR ranges: \(entry)")
            }
            if parts.count == 2 {
                let limit = address.contains(":") ? 128 : 32
                guard let n = Int(parts[1]), (0...limit).contains(n) else { throw PlatformError.invalid("bad prefix length in \(entry)") }
            }
        }
    }

    static func isNumericAddress(_ s: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, s, &v4) == 1 || inet_pton(AF_INET6, s, &v6) == 1
    }

    static func trunk(_ r: Row) -> SIPTrunk {
        SIPTrunk(id: r.string("id") ?? "", name: r.string("name") ?? "", host: r.string("host") ?? "", port: Int(r.int("port") ?? 5060),
                 transport: r.string("transport") ?? "udp", username: r.string("username"), password: r.string("password"),
                 register: (r.int("register") ?? 0) != 0,
                 allow: (r.string("allow") ?? "").split(separator: ",").map(String.init),
                 healthInterval: Int(r.int("health_interval") ?? 30),
                 mediaEncryption: r.string("media_encryption") ?? "none", dtmf: r.string("dtmf") ?? "rfc4733", createdAt: Int64(r.int("created_at") ?? 0), updatedAt: Int64(r.int("updated_at") ?? 0))
    }
}

import Synchronization
