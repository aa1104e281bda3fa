import Foundation
import Store
import Synchronization

/// An E.164 number the operator owns on a SIP trunk, optionally linked to an application.
public struct PhoneNumber: Sendable, Equatable {
    public var msisdn: String
    public var country: String
    public var type: String
    public var features: [String]
    public var applicationID: String?
    /// The SIP trunk calls to and from this number use (nil: none yet).
    public var trunkID: String? = nil
}

/// The account's numbers, in the store.
public final class Numbers: Sendable {
    let db: any SQLStore
    let clock: any WallClock
    /// `owner(of:)` answers by number, absent ones included (the SIP edge asks once per INVITE). Every write
    /// to a number goes through this type and forgets its entry; changes made elsewhere that touch numbers
    /// (an application or a trunk deleted: the store nulls the links) call `forgetRoutes()`. Cleared whole
    /// when it reaches `routeCapacity`, so numbers dialled at random cannot grow it without bound.
    let routes = Mutex(RouteCache())
    static let routeCapacity = 10_000

    struct RouteCache {
        var entries: [String: PhoneNumber?] = [:]
        /// Bumped by every forget: a lookup that read the store across a forget does not keep what it read.
        var generation: UInt64 = 0
    }

    init(db: any SQLStore, clock: any WallClock) {
        self.db = db
        self.clock = clock
    }

    /// Digits only, 6 to 15 of them (E.164 without the plus), a leading + tolerated.
    public static func normalize(_ msisdn: String) throws -> String {
        var s = msisdn.trimmingCharacters(in: .whitespaces)
        if s.hasPrefix("+") { s.removeFirst() }
        guard (6...15).contains(s.count), s.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw PlatformError.invalid("msisdn must be an E.164 number: 6 to 15 digits.")
        }
        return s
    }

    public func buy(apiKey: String, country: String, msisdn: String) throws -> PhoneNumber {
        let m = try Self.normalize(msisdn)
        let c = country.uppercased()
        guard c.count == 2, c.allSatisfy({ $0.isASCII && $0.isLetter }) else { throw PlatformError.invalid("country must be a two-letter ISO code.") }
        let n = PhoneNumber(msisdn: m, country: c, type: "landline", features: ["VOICE"], applicationID: nil)
        do {
            try db.execute("INSERT INTO numbers (msisdn, api_key, country, type, features, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                           [.text(m), .text(apiKey), .text(c), .text(n.type), .text(n.features.joined(separator: ",")), .int(clock.now().millis)])
        } catch {
            throw uniqueViolation(error, as: PlatformError.conflict("The number \(m) is already owned."))
        }
        forgetRoute(m)
        return n
    }

    public func get(msisdn: String, apiKey: String) throws -> PhoneNumber {
        let m = try Self.normalize(msisdn)
        guard let r = try db.queryOne("SELECT * FROM numbers WHERE msisdn = ? AND api_key = ?", [.text(m), .text(apiKey)]) else {
            throw PlatformError.notFound("number")
        }
        return Self.number(r)
    }

    /// Links the number to an application (nil unlinks).
    public func link(msisdn: String, apiKey: String, applicationID: String?) throws -> PhoneNumber {
        var n = try get(msisdn: msisdn, apiKey: apiKey)
        n.applicationID = applicationID
        try db.execute("UPDATE numbers SET application_id = ? WHERE msisdn = ?", [SQLValue(applicationID), .text(n.msisdn)])
        forgetRoute(n.msisdn)
        return n
    }

    /// Puts the number on a SIP trunk (nil takes it off).
    public func assignTrunk(msisdn: String, apiKey: String, trunkID: String?) throws -> PhoneNumber {
        var n = try get(msisdn: msisdn, apiKey: apiKey)
        n.trunkID = trunkID
        try db.execute("UPDATE numbers SET trunk_id = ? WHERE msisdn = ?", [SQLValue(trunkID), .text(n.msisdn)])
        forgetRoute(n.msisdn)
        return n
    }

    public func cancel(msisdn: String, apiKey: String) throws {
        let n = try get(msisdn: msisdn, apiKey: apiKey)
        try db.execute("DELETE FROM numbers WHERE msisdn = ?", [.text(n.msisdn)])
        forgetRoute(n.msisdn)
    }

    public func list(apiKey: String, applicationID: String? = nil, pattern: String? = nil) throws -> [PhoneNumber] {
        var sql = "SELECT * FROM numbers WHERE api_key = ?"
        var b: [SQLValue] = [.text(apiKey)]
        if let applicationID { sql += " AND application_id = ?"; b.append(.text(applicationID)) }
        if let pattern { sql += " AND msisdn LIKE ?"; b.append(.text("%" + pattern.filter(\.isNumber) + "%")) }
        return try db.query(sql + " ORDER BY msisdn", b).map(Self.number)
    }

    /// The number a call to `msisdn` is for, across the account (inbound routing); from the cache when
    /// it was asked before and has not changed since.
    public func owner(of msisdn: String) throws -> PhoneNumber? {
        guard let m = try? Self.normalize(msisdn) else { return nil }
        let (cached, generation) = routes.withLock { ($0.entries[m], $0.generation) }
        if let cached { return cached }
        // The store is read under no lock. A write racing this read forgets its number after the write, so
        // what this read returns is kept only when no forget happened meanwhile.
        let number = try db.queryOne("SELECT * FROM numbers WHERE msisdn = ?", [.text(m)]).map(Self.number)
        routes.withLock { cache in
            guard cache.generation == generation else { return }
            if cache.entries.count >= Self.routeCapacity { cache.entries.removeAll() }
            cache.entries[m] = .some(number)
        }
        return number
    }

    /// Forgets every cached route (an application or trunk deleted: the store changed numbers' links).
    public func forgetRoutes() {
        routes.withLock { cache in
            cache.generation &+= 1
            cache.entries.removeAll()
        }
    }

    func forgetRoute(_ msisdn: String) {
        routes.withLock { cache in
            cache.generation &+= 1
            cache.entries[msisdn] = nil
        }
    }

    static func number(_ r: Row) -> PhoneNumber {
        PhoneNumber(msisdn: r.string("msisdn") ?? "", country: r.string("country") ?? "", type: r.string("type") ?? "",
                    features: (r.string("features") ?? "").split(separator: ",").map(String.init), applicationID: r.string("application_id"),
                    trunkID: r.string("trunk_id"))
    }
}
