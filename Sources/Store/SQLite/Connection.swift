import CSQLite

/// One SQLite connection. Not thread-safe by itself: `Database` serialises access,
/// and hands a `Connection` to transaction bodies, which must not let it escape.
public final class Connection {
    let handle: OpaquePointer
    var cache: StatementCache

    /// SQLite copies bound text and blobs before the bind call returns.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    init(path: String, options: Database.Options) throws(StoreError) {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_NOMUTEX  // Database's Mutex does the locking.
        flags |= options.readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard let db else { throw .sqlite(code: rc, message: "cannot allocate connection for \(path)") }
        guard rc == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(db))
            sqlite3_close_v2(db)
            throw .sqlite(code: rc, message: "open \(path): \(message)")
        }
        handle = db
        cache = StatementCache(capacity: options.statementCacheCapacity)
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, Int32(clamping: options.busyTimeoutMilliseconds))
        if !options.readOnly {
            // In-memory databases answer "memory": WAL does not apply to them.
            _ = try query("PRAGMA journal_mode=WAL")
        }
        try execute("PRAGMA synchronous=\(options.synchronous.rawValue)")
        try execute("PRAGMA foreign_keys=ON")
    }

    deinit {
        cache.removeAll()
        sqlite3_close_v2(handle)
    }

    // MARK: Statements

    /// Runs one statement and returns how many rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> Int {
        try withStatement(sql, bindings) { stmt throws(StoreError) in
            while try step(stmt, sql) {}
        }
        return changes
    }

    /// Runs one INSERT and returns the new row's rowid.
    @discardableResult
    public func insert(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> Int64 {
        try execute(sql, bindings)
        return lastInsertRowID
    }

    /// Runs several `;`-separated statements without bindings (schema scripts).
    public func executeScript(_ sql: String) throws(StoreError) {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        guard rc == SQLITE_OK else {
            let message = errorMessage.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
            sqlite3_free(errorMessage)
            throw StoreError.from(code: rc, message: message)
        }
    }

    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> [Row] {
        try withStatement(sql, bindings) { stmt throws(StoreError) -> [Row] in
            let count = Int(sqlite3_column_count(stmt))
            let columns = ColumnIndex(names: (0..<count).map { String(cString: sqlite3_column_name(stmt, Int32($0))) })
            var rows: [Row] = []
            while try step(stmt, sql) {
                var values: [SQLValue] = []
                values.reserveCapacity(count)
                for i in 0..<Int32(count) { values.append(column(stmt, i)) }
                rows.append(Row(columns: columns, values: values))
            }
            return rows
        }
    }

    /// The first row, or `nil` when there is none.
    public func queryOne(_ sql: String, _ bindings: [SQLValue] = []) throws(StoreError) -> Row? {
        try query(sql, bindings).first
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed by the most recent INSERT, UPDATE or DELETE on this connection.
    public var changes: Int { Int(sqlite3_changes(handle)) }

    /// True while a transaction is open.
    public var inTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: Internals

    private func withStatement<T>(
        _ sql: String, _ bindings: [SQLValue], _ body: (OpaquePointer) throws(StoreError) -> T
    ) throws(StoreError) -> T {
        let (stmt, cached) = try prepare(sql)
        defer {
            if cached {
                sqlite3_reset(stmt)
                sqlite3_clear_bindings(stmt)
            } else {
                sqlite3_finalize(stmt)
            }
        }
        try bind(stmt, bindings, sql)
        return try body(stmt)
    }

    private func prepare(_ sql: String) throws(StoreError) -> (OpaquePointer, cached: Bool) {
        if let stmt = cache.lookup(sql) { return (stmt, true) }
        var stmt: OpaquePointer?
        // `tail` points into the C string, so it is read while that string is alive (a String
        // passed straight to a `const char *` parameter may be a copy freed when the call returns).
        let (rc, trailing) = sql.withCString { text -> (Int32, Bool) in
            var tail: UnsafePointer<CChar>?
            let rc = sqlite3_prepare_v3(handle, text, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, &tail)
            return (rc, tail.map { !String(cString: $0).allSatisfy { $0.isWhitespace || $0 == ";" } } ?? false)
        }
        guard rc == SQLITE_OK else { throw error(rc, sql) }
        guard let stmt else { throw .misuse("no statement in SQL: \(sql)") }
        if trailing {
            sqlite3_finalize(stmt)
            throw .misuse("execute/query take one statement; use executeScript for several: \(sql)")
        }
        let cached = cache.insert(sql, stmt)
        return (stmt, cached)
    }

    private func bind(_ stmt: OpaquePointer, _ bindings: [SQLValue], _ sql: String) throws(StoreError) {
        let expected = Int(sqlite3_bind_parameter_count(stmt))
        guard expected == bindings.count else {
            throw .misuse("statement takes \(expected) bindings, got \(bindings.count): \(sql)")
        }
        for (offset, value) in bindings.enumerated() {
            let i = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(stmt, i)
            case .int(let v):
                rc = sqlite3_bind_int64(stmt, i, v)
            case .double(let v):
                rc = sqlite3_bind_double(stmt, i, v)
            case .text(var s):
                rc = s.withUTF8 { buf in
                    // An empty buffer may have no base address, which SQLite would read as NULL.
                    buf.count == 0
                        ? sqlite3_bind_text(stmt, i, "", 0, Self.transient)
                        : sqlite3_bind_text(stmt, i, UnsafeRawPointer(buf.baseAddress!).assumingMemoryBound(to: CChar.self),
                                            Int32(buf.count), Self.transient)
                }
            case .blob(let b):
                rc = b.isEmpty
                    ? sqlite3_bind_zeroblob(stmt, i, 0)
                    : b.withUnsafeBytes { sqlite3_bind_blob(stmt, i, $0.baseAddress, Int32($0.count), Self.transient) }
            }
            guard rc == SQLITE_OK else { throw error(rc, sql) }
        }
    }

    /// Advances one row; true when a row is available, false when done.
    private func step(_ stmt: OpaquePointer, _ sql: String) throws(StoreError) -> Bool {
        let rc = sqlite3_step(stmt)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw error(rc, sql)
        }
    }

    private func column(_ stmt: OpaquePointer, _ i: Int32) -> SQLValue {
        switch sqlite3_column_type(stmt, i) {
        case SQLITE_INTEGER:
            return .int(sqlite3_column_int64(stmt, i))
        case SQLITE_FLOAT:
            return .double(sqlite3_column_double(stmt, i))
        case SQLITE_TEXT:
            guard let text = sqlite3_column_text(stmt, i) else { return .text("") }
            let n = Int(sqlite3_column_bytes(stmt, i))
            return .text(String(decoding: UnsafeBufferPointer(start: text, count: n), as: UTF8.self))
        case SQLITE_BLOB:
            let n = Int(sqlite3_column_bytes(stmt, i))
            guard n > 0, let blob = sqlite3_column_blob(stmt, i) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: blob, count: n)))
        default:
            return .null
        }
    }

    private func error(_ rc: Int32, _ sql: String) -> StoreError {
        // sqlite3_extended_errcode gives the detail (e.g. UNIQUE) when rc is only the primary code.
        let code = rc & 0xFF == sqlite3_extended_errcode(handle) & 0xFF ? sqlite3_extended_errcode(handle) : rc
        return StoreError.from(code: code, message: String(cString: sqlite3_errmsg(handle)))
    }
}
