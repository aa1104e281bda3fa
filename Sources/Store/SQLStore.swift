/// The SQL store the domain is written against. SQLite (`Database` and its `Connection`) is the embedded
/// default; a server database (PostgreSQL) can implement the same two protocols without the domain, the
/// live layer or the API changing.
public protocol SQLStore: Sendable {
    @discardableResult
    func execute(_ sql: String, _ bindings: [SQLValue]) throws(StoreError) -> Int
    @discardableResult
    func insert(_ sql: String, _ bindings: [SQLValue]) throws(StoreError) -> Int64
    func query(_ sql: String, _ bindings: [SQLValue]) throws(StoreError) -> [Row]
    func queryOne(_ sql: String, _ bindings: [SQLValue]) throws(StoreError) -> Row?
    /// Runs `body` in one write transaction, rolled back if it throws; work registered with
    /// `SQLConnection.onCommit` runs after the commit, in commit order.
    func write<T: Sendable>(_ body: (any SQLConnection) throws -> T) throws -> T
    /// Brings the schema up to date; returns the versions applied.
    @discardableResult
    func migrate(_ migrations: [Migration]) throws(StoreError) -> [Int]
}

/// The connection a write transaction runs on.
public protocol SQLConnection: AnyObject {
    @discardableResult
    func execute(_ sql: String, _ bindings: [SQLValue]) throws(StoreError) -> Int
    @discardableResult
    func insert(_ sql: String, _ bindings: [SQLValue]) throws(StoreError) -> Int64
    func query(_ sql: String, _ bindings: [SQLValue]) throws(StoreError) -> [Row]
    func queryOne(_ sql: String, _ bindings: [SQLValue]) throws(StoreError) -> Row?
    func onCommit(_ work: @escaping () -> Void)
}

extension SQLStore {
    @discardableResult
    public func execute(_ sql: String) throws(StoreError) -> Int { try execute(sql, []) }
    public func query(_ sql: String) throws(StoreError) -> [Row] { try query(sql, []) }
    public func queryOne(_ sql: String) throws(StoreError) -> Row? { try queryOne(sql, []) }
}

extension SQLConnection {
    @discardableResult
    public func execute(_ sql: String) throws(StoreError) -> Int { try execute(sql, []) }
    public func query(_ sql: String) throws(StoreError) -> [Row] { try query(sql, []) }
    public func queryOne(_ sql: String) throws(StoreError) -> Row? { try queryOne(sql, []) }
}

extension Database: SQLStore {
    public func write<T: Sendable>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try transaction { (c: Connection) in try body(c) }
    }
}

extension Connection: SQLConnection {}
