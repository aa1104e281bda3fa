import CSQLite
import Synchronization

/// A SQLite database file shared by the whole process.
///
/// One connection guarded by a `Mutex`: every call holds the lock for its whole
/// statement (or transaction), so calls from any thread or task are serialised. The
/// lock is not re-entrant: inside `transaction { db in ... }` use the `Connection`
/// passed in, never this `Database`.
///
/// Durability: the file runs in WAL mode with `synchronous=NORMAL` by default. A commit
/// has been appended to the `-wal` file with write(2) before `COMMIT` returns, so it sits
/// in the kernel's page cache and survives the process being killed (`kill -9`, crash);
/// only an OS crash or power loss can drop the most recent commits (never corrupting the
/// file), because the WAL is fsync'd at checkpoints rather than at every commit. Choose
/// `.full` to fsync on every commit when power-loss durability matters more than latency.
public final class Database: Sendable {
    /// How the connection is configured (https://sqlite.org/pragma.html).
    public struct Options: Sendable {
        public enum Synchronous: String, Sendable {
            case normal = "NORMAL"
            case full = "FULL"
        }

        public var synchronous: Synchronous
        public var busyTimeoutMilliseconds: Int
        public var statementCacheCapacity: Int
        public var readOnly: Bool

        public init(
            synchronous: Synchronous = .normal, busyTimeoutMilliseconds: Int = 5000,
            statementCacheCapacity: Int = 128, readOnly: Bool = false
        ) {
            self.synchronous = synchronous
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.statementCacheCapacity = statementCacheCapacity
            self.readOnly = readOnly
        }
    }

    public let path: String
    private let connection: Mutex<Connection>

    /// Opens (creating if needed) the database at `path`; `":memory:"` gives a private in-memory database.
    public init(path: String, options: Options = Options()) throws(StoreError) {
        self.path = path
        connection = Mutex(try Connection(path: path, options: options))
    }

    public static func open(path: String, options: Options = Options()) throws(StoreError) -> Database {
        try Database(path: path, options: options)
    }

    /// A fresh private in-memory database, for tests.
    public static func inMemory() throws(StoreError) -> Database {
        try Database(path: ":memory:")
    }

    // MARK: Single statements

    @discardableResult
    public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> Int {
        try withConnection { c throws(StoreError) in try c.execute(sql, bindings) }
    }

    /// Runs one INSERT and returns the new rowid (read under the same lock, so it is exact).
    @discardableResult
    public func insert(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> Int64 {
        try withConnection { c throws(StoreError) in try c.insert(sql, bindings) }
    }

    public func executeScript(_ sql: String) throws(StoreError) {
        try withConnection { c throws(StoreError) in try c.executeScript(sql) }
    }

    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> [Row] {
        try withConnection { c throws(StoreError) in try c.query(sql, bindings) }
    }

    public func queryOne(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> Row? {
        try withConnection { c throws(StoreError) in try c.queryOne(sql, bindings) }
    }

    /// Rowid of the last insert by any caller; prefer `insert(_:_:)` or read it inside a transaction.
    public var lastInsertRowID: Int64 { connection.withLock { $0.lastInsertRowID } }

    /// Rows changed by the last statement of any caller; prefer `execute`'s return value.
    public var changes: Int { connection.withLock { $0.changes } }

    // MARK: Transactions

    /// Runs `body` inside `BEGIN IMMEDIATE` ... `COMMIT`, rolling back if it throws. Work the body registered
    /// with `Connection.onCommit` runs after the commit, before the lock is released.
    ///
    /// IMMEDIATE takes the write lock up front, so two writers wait on `busy_timeout`
    /// instead of failing with SQLITE_BUSY when a read transaction tries to upgrade.
    public func transaction<T: Sendable>(_ body: (Connection) throws -> T) throws -> T {
        try connection.withLock { c in
            try c.execute("BEGIN IMMEDIATE")
            do {
                let result = try body(c)
                try c.execute("COMMIT")
                let committed = c.afterCommit
                c.afterCommit = []
                for work in committed { work() }
                return result
            } catch {
                c.afterCommit = []
                // SQLite may already have rolled back (e.g. after SQLITE_FULL); only roll back if still open.
                if c.inTransaction { _ = try? c.execute("ROLLBACK") }
                throw error
            }
        }
    }

    /// Runs `body` with the connection locked but no transaction (for several reads in a row).
    public func withConnection<T: Sendable, E: Error>(_ body: (Connection) throws(E) -> T) throws(E) -> T {
        try connection.withLock { (c: inout Connection) throws(E) -> T in try body(c) }
    }

    // MARK: Diagnostics

    /// Statements currently cached, and hits/misses since open.
    public var statementCacheStatistics: (count: Int, hits: Int, misses: Int) {
        connection.withLock { ($0.cache.count, $0.cache.hits, $0.cache.misses) }
    }
}
