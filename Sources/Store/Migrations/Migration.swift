/// One schema change, applied at most once per database and recorded in `schema_migrations`.
public struct Migration: Sendable, Equatable {
    /// Strictly increasing, starting at 1; never renumber a released migration.
    public var version: Int
    public var name: String
    /// One or more `;`-separated statements; must not contain its own BEGIN/COMMIT.
    public var sql: String

    public init(version: Int, name: String, sql: String) {
        self.version = version
        self.name = name
        self.sql = sql
    }
}
