extension Database {
    static let createMigrationsTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            version INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
        )
        """

    /// The highest applied migration version, 0 for a fresh database.
    public var schemaVersion: Int {
        get throws(StoreError) {
            try execute(Self.createMigrationsTable)
            return try queryOne("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations")?.int("v") ?? 0
        }
    }

    /// Applies the migrations not yet recorded, each in its own transaction, in version order,
    /// and returns the versions applied. Refuses a database whose schema is newer than
    /// the newest migration given (it was opened by newer code).
    @discardableResult
    public func migrate(_ migrations: [Migration]) throws(StoreError) -> [Int] {
        let sorted = migrations.sorted { $0.version < $1.version }
        guard sorted.allSatisfy({ $0.version > 0 }) else { throw .misuse("migration versions start at 1") }
        for (a, b) in zip(sorted, sorted.dropFirst()) where a.version == b.version {
            throw .misuse("duplicate migration version \(a.version): \(a.name), \(b.name)")
        }
        let supported = sorted.last?.version ?? 0
        let current = try schemaVersion
        guard current <= supported else { throw .schemaTooNew(database: current, supported: supported) }

        var applied: [Int] = []
        for migration in sorted where migration.version > current {
            do {
                let didApply = try transaction { c -> Bool in
                    // Another process may have applied it between our check and our write lock.
                    if try c.queryOne("SELECT 1 FROM schema_migrations WHERE version = ?", [.int(Int64(migration.version))]) != nil {
                        return false
                    }
                    try c.executeScript(migration.sql)
                    try c.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (?, ?)",
                        [.int(Int64(migration.version)), .text(migration.name)])
                    return true
                }
                if didApply { applied.append(migration.version) }
            } catch {
                let message = (error as? StoreError).map { "\($0)" } ?? "\(error)"
                throw .migrationFailed(version: migration.version, name: migration.name, message: message)
            }
        }
        return applied
    }
}
