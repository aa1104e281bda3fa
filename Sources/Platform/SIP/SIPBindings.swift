import Store

/// Device registrations kept across restarts: each address of record's current bindings, replaced
/// whole on every accepted REGISTER (none: the device unregistered), with wall-clock expiry.
public final class SIPBindings: Sendable {
    /// One registered contact.
    public struct Row: Hashable, Sendable {
        public var aor: String
        public var contact: String
        public var sourceHost: String
        public var sourcePort: Int
        public var transport: String
        public var expiresAtMillis: Int64
        public var callID: String
        public var sequence: Int64

        public init(aor: String, contact: String, sourceHost: String, sourcePort: Int, transport: String, expiresAtMillis: Int64,
                    callID: String, sequence: Int64) {
            self.aor = aor
            self.contact = contact
            self.sourceHost = sourceHost
            self.sourcePort = sourcePort
            self.transport = transport
            self.expiresAtMillis = expiresAtMillis
            self.callID = callID
            self.sequence = sequence
        }
    }

    let db: any SQLStore
    let clock: any WallClock

    init(db: any SQLStore, clock: any WallClock) {
        self.db = db
        self.clock = clock
    }

    /// Replaces the address of record's bindings with `rows` (and drops everyone's expired ones).
    public func replace(aor: String, with rows: [Row]) throws {
        let now = clock.now().millis
        try db.write { c in
            _ = try c.execute("DELETE FROM sip_bindings WHERE aor = ? OR expires_at <= ?", [.text(aor), .int(now)])
            for r in rows {
                _ = try c.execute("""
                    INSERT INTO sip_bindings (aor, contact, source_host, source_port, transport, expires_at, call_id, sequence)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                    """, [.text(r.aor), .text(r.contact), .text(r.sourceHost), .int(Int64(r.sourcePort)), .text(r.transport),
                          .int(r.expiresAtMillis), .text(r.callID), .int(r.sequence)])
            }
        }
    }

    /// Bindings that have not expired.
    public func live() throws -> [Row] {
        try db.query("SELECT * FROM sip_bindings WHERE expires_at > ? ORDER BY aor, contact", [.int(clock.now().millis)]).map { r in
            Row(aor: r.string("aor") ?? "", contact: r.string("contact") ?? "", sourceHost: r.string("source_host") ?? "",
                sourcePort: Int(r.int64("source_port") ?? 0), transport: r.string("transport") ?? "UDP",
                expiresAtMillis: r.int64("expires_at") ?? 0, callID: r.string("call_id") ?? "", sequence: r.int64("sequence") ?? 0)
        }
    }
}
