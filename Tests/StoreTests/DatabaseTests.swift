import Foundation
import Testing
@testable import Store

/// A fresh file path in the temp directory, removed (with its WAL files) by `cleanup`.
struct TempPath {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString).sqlite").path

    func cleanup() {
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
}

let usersSchema = [
    Migration(version: 1, name: "users", sql: """
        CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, score REAL, avatar BLOB);
        CREATE INDEX users_score ON users(score);
        """),
    Migration(version: 2, name: "sessions", sql: """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                               active INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)));
        """),
]

@Suite("SQLite database")
struct DatabaseTests {
    @Test("values of every storage class round-trip with typed accessors")
    func typedValues() throws {
        let db = try Database.inMemory()
        try db.migrate(usersSchema)
        let id = try db.insert(
            "INSERT INTO users (name, score, avatar) VALUES (?, ?, ?)", ["ann", 2.5, .blob([0, 1, 255])])
        #expect(id == 1)
        try db.execute("INSERT INTO users (name, score, avatar) VALUES (?, ?, ?)", ["", nil, .blob([])])
        let rows = try db.query("SELECT id, name, score, avatar FROM users ORDER BY id")
        #expect(rows.count == 2)
        let ann = rows[0]
        #expect(ann.int("id") == 1)
        #expect(ann["name"] as String? == "ann")
        #expect(ann.string("name") == "ann")
        #expect(ann.double("score") == 2.5)
        #expect(ann.blob("avatar") == [0, 1, 255])
        #expect(ann["missing"] == nil)
        #expect(ann.int("name") == nil)  // no silent coercion from text
        #expect(ann.columnNames == ["id", "name", "score", "avatar"])
        let empty = rows[1]
        #expect(empty.string("name") == "")
        #expect(empty.isNull("score"))
        #expect(empty.double("score") == nil)
        #expect(empty.blob("avatar") == [])
        #expect(try db.queryOne("SELECT name FROM users WHERE id = ?", [99]) == nil)
        #expect(try db.queryOne("SELECT count(*) AS n FROM users")?.int("n") == 2)
        let unicode = "naïve 🎉 \u{0}x"
        try db.execute("INSERT INTO users (name) VALUES (?)", [.text(unicode)])
        #expect(try db.queryOne("SELECT name FROM users WHERE name = ?", [SQLValue(unicode)])?.string("name") == unicode)
    }

    @Test("execute reports changed rows")
    func changes() throws {
        let db = try Database.inMemory()
        try db.migrate(usersSchema)
        for name in ["a", "b", "c"] { try db.execute("INSERT INTO users (name, score) VALUES (?, 1)", [.text(name)]) }
        #expect(try db.execute("UPDATE users SET score = 2 WHERE name != ?", ["a"]) == 2)
        #expect(db.changes == 2)
        #expect(try db.execute("DELETE FROM users") == 3)
    }

    @Test("migrations apply once and re-opening applies nothing")
    func migrations() throws {
        let temp = TempPath()
        defer { temp.cleanup() }
        do {
            let db = try Database(path: temp.path)
            #expect(try db.schemaVersion == 0)
            #expect(try db.migrate(usersSchema) == [1, 2])
            #expect(try db.migrate(usersSchema) == [])
            #expect(try db.schemaVersion == 2)
        }
        let reopened = try Database(path: temp.path)
        #expect(try reopened.migrate(usersSchema) == [])
        let third = usersSchema + [Migration(version: 3, name: "tags", sql: "ALTER TABLE users ADD COLUMN tag TEXT")]
        #expect(try reopened.migrate(third) == [3])
        let recorded = try reopened.query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
        #expect(recorded.map { $0.int("version") } == [1, 2, 3])
        #expect(recorded.map { $0.string("name") } == ["users", "sessions", "tags"])
        #expect(recorded.allSatisfy { $0.string("applied_at") != nil })
        #expect(try reopened.queryOne("PRAGMA journal_mode")?.string("journal_mode") == "wal")
        #expect(try reopened.queryOne("PRAGMA foreign_keys")?.int("foreign_keys") == 1)
        #expect(try reopened.queryOne("PRAGMA synchronous")?.int("synchronous") == 1)  // NORMAL
    }

    @Test("a database migrated by newer code is refused")
    func schemaTooNew() throws {
        let db = try Database.inMemory()
        try db.migrate(usersSchema)
        #expect(throws: StoreError.schemaTooNew(database: 2, supported: 1)) { try db.migrate(Array(usersSchema.prefix(1))) }
    }

    @Test("a failing migration rolls back entirely and is not recorded")
    func failingMigration() throws {
        let db = try Database.inMemory()
        let bad = usersSchema + [Migration(version: 3, name: "broken", sql: "CREATE TABLE t (x); INSERT INTO nowhere VALUES (1);")]
        #expect(throws: StoreError.self) { try db.migrate(bad) }
        #expect(try db.schemaVersion == 2)
        #expect(try db.queryOne("SELECT name FROM sqlite_master WHERE name = 't'") == nil)
        #expect(throws: StoreError.misuse("duplicate migration version 1: a, b")) {
            try db.migrate([Migration(version: 1, name: "a", sql: ""), Migration(version: 1, name: "b", sql: "")])
        }
    }

    @Test("transaction rolls back everything when the body throws")
    func rollback() throws {
        struct Abort: Error {}
        let db = try Database.inMemory()
        try db.migrate(usersSchema)
        #expect(throws: Abort.self) {
            try db.transaction { c in
                try c.execute("INSERT INTO users (name) VALUES ('x')")
                try c.execute("INSERT INTO users (name) VALUES ('y')")
                #expect(c.inTransaction)
                throw Abort()
            }
        }
        #expect(try db.queryOne("SELECT count(*) AS n FROM users")?.int("n") == 0)
        let id = try db.transaction { c in
            try c.insert("INSERT INTO users (name) VALUES ('z')")
        }
        #expect(id == 1)
        #expect(try db.queryOne("SELECT name FROM users")?.string("name") == "z")
        // A constraint failure mid-transaction also rolls back the earlier statements.
        #expect(throws: StoreError.self) {
            try db.transaction { c in
                try c.execute("INSERT INTO users (name) VALUES ('w')")
                try c.execute("INSERT INTO users (name) VALUES ('z')")
            }
        }
        #expect(try db.query("SELECT name FROM users").map { $0.string("name") } == ["z"])
    }

    @Test("constraint violations are typed so the API can answer 409")
    func constraints() throws {
        let db = try Database.inMemory()
        try db.migrate(usersSchema)
        try db.execute("INSERT INTO users (id, name) VALUES (1, 'a')")
        do {
            try db.execute("INSERT INTO users (name) VALUES ('a')")
            Issue.record("expected a unique violation")
        } catch {
            #expect(error.isUniqueViolation)
            guard case .constraint(.unique, let message) = error else { Issue.record("got \(error)"); return }
            #expect(message.contains("users.name"))
        }
        #expect { try db.execute("INSERT INTO users (id, name) VALUES (1, 'b')") } throws: { error in
            (error as? StoreError).map { if case .constraint(.primaryKey, _) = $0 { true } else { false } } ?? false
        }
        #expect { try db.execute("INSERT INTO users (name) VALUES (NULL)") } throws: { error in
            (error as? StoreError).map { if case .constraint(.notNull, _) = $0 { true } else { false } } ?? false
        }
        #expect { try db.execute("INSERT INTO sessions (id, user_id) VALUES ('s', 42)") } throws: { error in
            (error as? StoreError).map { if case .constraint(.foreignKey, _) = $0 { true } else { false } } ?? false
        }
        #expect { try db.execute("INSERT INTO sessions (id, user_id, active) VALUES ('s', 1, 7)") } throws: { error in
            (error as? StoreError).map { if case .constraint(.check, _) = $0 { true } else { false } } ?? false
        }
        // Foreign keys cascade because the pragma is on.
        try db.execute("INSERT INTO sessions (id, user_id) VALUES ('s', 1)")
        try db.execute("DELETE FROM users WHERE id = 1")
        #expect(try db.queryOne("SELECT count(*) AS n FROM sessions")?.int("n") == 0)
    }

    @Test("programming errors are reported, not crashes")
    func misuse() throws {
        let db = try Database.inMemory()
        try db.migrate(usersSchema)
        #expect(throws: StoreError.self) { try db.execute("SELECT ?", []) }
        #expect(throws: StoreError.self) { try db.execute("SELECT 1; SELECT 2") }
        #expect(throws: StoreError.self) { try db.execute("SELEC 1") }
        #expect(throws: StoreError.self) { try db.query("SELECT * FROM missing") }
        try db.execute("SELECT 1;  ")
    }

    @Test("prepared statements are reused and the cache stays bounded")
    func statementCache() throws {
        let db = try Database(path: ":memory:", options: .init(statementCacheCapacity: 4))
        try db.migrate(usersSchema)
        let before = db.statementCacheStatistics
        for i in 0..<50 { try db.execute("INSERT INTO users (name) VALUES (?)", [.text("u\(i)")]) }
        let after = db.statementCacheStatistics
        #expect(after.hits - before.hits >= 49)
        #expect(after.misses - before.misses <= 1)
        for i in 0..<10 { _ = try db.query("SELECT \(i) AS n") }
        #expect(db.statementCacheStatistics.count <= 4)
        // A statement evicted and prepared again still works.
        #expect(try db.queryOne("SELECT count(*) AS n FROM users")?.int("n") == 50)
        let uncached = try Database(path: ":memory:", options: .init(statementCacheCapacity: 0))
        #expect(try uncached.queryOne("SELECT 7 AS n")?.int("n") == 7)
        #expect(uncached.statementCacheStatistics.count == 0)
    }

    @Test("many tasks write concurrently without losing rows")
    func concurrentTasks() async throws {
        let temp = TempPath()
        defer { temp.cleanup() }
        let db = try Database(path: temp.path)
        try db.migrate(usersSchema)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<8 {
                group.addTask {
                    for i in 0..<50 {
                        if i % 2 == 0 {
                            try db.execute("INSERT INTO users (name, score) VALUES (?, ?)", [.text("t\(t)-\(i)"), .double(Double(i))])
                        } else {
                            try db.transaction { c in
                                try c.execute("INSERT INTO users (name) VALUES (?)", [.text("t\(t)-\(i)")])
                                _ = try c.query("SELECT count(*) FROM users")
                            }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try db.queryOne("SELECT count(*) AS n FROM users")?.int("n") == 400)
    }

    @Test("two connections on one file see each other's commits, including from threads")
    func twoConnections() throws {
        let temp = TempPath()
        defer { temp.cleanup() }
        let writer = try Database(path: temp.path)
        try writer.migrate(usersSchema)
        let other = try Database(path: temp.path)
        try other.migrate(usersSchema)  // already applied: no-op
        let done = DispatchGroup()
        for t in 0..<4 {
            done.enter()
            Thread {
                let db = t % 2 == 0 ? writer : other
                for i in 0..<25 { _ = try? db.execute("INSERT INTO users (name) VALUES (?)", [.text("th\(t)-\(i)")]) }
                done.leave()
            }.start()
        }
        done.wait()
        #expect(try writer.queryOne("SELECT count(*) AS n FROM users")?.int("n") == 100)
        #expect(try other.queryOne("SELECT count(*) AS n FROM users")?.int("n") == 100)
    }

    @Test("an acknowledged write is readable by a second connection while the first stays open")
    func durability() throws {
        let temp = TempPath()
        defer { temp.cleanup() }
        let first = try Database(path: temp.path)
        try first.migrate(usersSchema)
        try first.execute("INSERT INTO users (name) VALUES ('kept')")
        // No close, no checkpoint: the commit lives only in the -wal file.
        #expect(FileManager.default.fileExists(atPath: temp.path + "-wal"))
        let second = try Database(path: temp.path)
        #expect(try second.queryOne("SELECT name FROM users")?.string("name") == "kept")
        #expect(try second.schemaVersion == 2)
        _ = first
    }

    @Test("read-only connections cannot write")
    func readOnly() throws {
        let temp = TempPath()
        defer { temp.cleanup() }
        let db = try Database(path: temp.path)
        try db.migrate(usersSchema)
        let reader = try Database(path: temp.path, options: .init(readOnly: true))
        #expect(try reader.query("SELECT * FROM users").isEmpty)
        #expect(throws: StoreError.self) { try reader.execute("INSERT INTO users (name) VALUES ('x')") }
    }
}
