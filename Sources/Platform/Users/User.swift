import Crypto
import Foundation
import Store
import Wire

/// A user of an application (`USR-<uuid>`); `name` is unique within the application.
public struct User: Sendable, Equatable {
    public var id: String
    public var applicationID: String
    public var name: String
    public var displayName: String?
    public var imageURL: String?
    /// `{"custom_data": {...}}` as the Users API shows it.
    public var properties: JSONValue
    public var createdAt: Date
    public var updatedAt: Date
    var seq: Int64 = 0
}

/// What a create or update of a user may set.
public typealias UserInput = ResourceInput

/// Users of applications, in the store.
public final class Users: Sendable {
    let db: any SQLStore
    let clock: any WallClock

    init(db: any SQLStore, clock: any WallClock) {
        self.db = db
        self.clock = clock
    }

    /// A user name: 1-200 characters, no control characters.
    static func validName(_ n: String) -> Bool {
        !n.isEmpty && n.count <= 200 && !n.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    public func create(applicationID: String, input: UserInput) throws -> User {
        let name = input.name ?? "NAM-" + UUID4.generate()
        guard Self.validName(name) else { throw PlatformError.invalid("name must be 1 to 200 characters without control characters.") }
        let now = clock.now()
        let user = User(id: "USR-" + UUID4.generate(), applicationID: applicationID, name: name, displayName: input.displayName ?? nil,
                        imageURL: input.imageURL ?? nil, properties: input.properties ?? .object([:]), createdAt: now, updatedAt: now)
        do {
            try db.execute("""
                INSERT INTO users (id, application_id, name, display_name, image_url, properties, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, [.text(user.id), .text(applicationID), .text(name), SQLValue(user.displayName), SQLValue(user.imageURL),
                      .text(JSONText.encode(user.properties)), .int(now.millis), .int(now.millis)])
        } catch {
            throw uniqueViolation(error, as: PlatformError.conflict("A user named '\(name)' already exists in this application."))
        }
        return user
    }

    public func get(id: String, applicationID: String) throws -> User? {
        try db.queryOne("SELECT * FROM users WHERE id = ? AND application_id = ?", [.text(id), .text(applicationID)]).map(Self.user)
    }

    public func find(name: String, applicationID: String) throws -> User? {
        try db.queryOne("SELECT * FROM users WHERE name = ? AND application_id = ?", [.text(name), .text(applicationID)]).map(Self.user)
    }

    /// By id (`USR-…`) or, failing that, by name.
    public func resolve(_ idOrName: String, applicationID: String) throws -> User? {
        if idOrName.hasPrefix("USR-"), let u = try get(id: idOrName, applicationID: applicationID) { return u }
        return try find(name: idOrName, applicationID: applicationID)
    }

    public func list(applicationID: String, page: PageRequest, name: String? = nil) throws -> Page<User> {
        let s = page.sql
        var bindings: [SQLValue] = [.text(applicationID)]
        var sql = "SELECT * FROM users WHERE application_id = ?"
        if let name { sql += " AND name = ?"; bindings.append(.text(name)) }
        sql += " AND \(s.condition)"
        if let b = s.binding { bindings.append(.int(b)) }
        sql += " ORDER BY seq \(s.orderBy) LIMIT ?"
        bindings.append(.int(Int64(page.pageSize + 1)))
        let rows = try db.query(sql, bindings).map { r in (r.int64("seq") ?? 0, Self.user(r)) }
        return Page.make(rows: rows, request: page)
    }

    public func update(id: String, applicationID: String, input: UserInput) throws -> User {
        guard var user = try get(id: id, applicationID: applicationID) else { throw PlatformError.notFound("user") }
        if let n = input.name {
            guard Self.validName(n) else { throw PlatformError.invalid("name must be 1 to 200 characters without control characters.") }
            user.name = n
        }
        if let d = input.displayName { user.displayName = d }
        if let i = input.imageURL { user.imageURL = i }
        if let p = input.properties { user.properties = p }
        user.updatedAt = clock.now()
        do {
            try db.execute("UPDATE users SET name = ?, display_name = ?, image_url = ?, properties = ?, updated_at = ? WHERE id = ?",
                           [.text(user.name), SQLValue(user.displayName), SQLValue(user.imageURL), .text(JSONText.encode(user.properties)),
                            .int(user.updatedAt.millis), .text(user.id)])
        } catch {
            throw uniqueViolation(error, as: PlatformError.conflict("A user named '\(user.name)' already exists in this application."))
        }
        return user
    }

    public func delete(id: String, applicationID: String) throws {
        let n = try db.execute("DELETE FROM users WHERE id = ? AND application_id = ?", [.text(id), .text(applicationID)])
        if n == 0 { throw PlatformError.notFound("user") }
    }

    static func user(_ r: Row) -> User {
        User(id: r.string("id") ?? "", applicationID: r.string("application_id") ?? "", name: r.string("name") ?? "",
             displayName: r.string("display_name"), imageURL: r.string("image_url"), properties: JSONText.decode(r.string("properties")),
             createdAt: Date(millis: r.int64("created_at") ?? 0), updatedAt: Date(millis: r.int64("updated_at") ?? 0),
             seq: r.int64("seq") ?? 0)
    }
}
