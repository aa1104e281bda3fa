import Synchronization
import Testing
@testable import Store

/// `Connection.onCommit`: what a transaction publishes (conversation events) happens only after it commits.
@Suite("Commit hooks")
struct CommitHookTests {
    struct Abort: Error {}

    @Test("work registered in a transaction runs after COMMIT, in order, with the row visible")
    func runsAfterCommit() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (v INTEGER)")
        let seen = Mutex<[String]>([])
        try db.transaction { c in
            try c.execute("INSERT INTO t VALUES (1)")
            c.onCommit { seen.withLock { $0.append("first, in transaction: \(c.inTransaction)") } }
            c.onCommit { seen.withLock { $0.append("second") } }
            #expect(seen.withLock { $0.isEmpty })
        }
        #expect(seen.withLock { $0 } == ["first, in transaction: false", "second"])
        #expect(try db.query("SELECT v FROM t").count == 1)
    }

    @Test("a rolled-back transaction runs none of its work, and the next one does not inherit it")
    func droppedOnRollback() throws {
        let db = try Database.inMemory()
        try db.execute("CREATE TABLE t (v INTEGER)")
        let seen = Mutex<[Int]>([])
        #expect(throws: Abort.self) {
            try db.transaction { c in
                try c.execute("INSERT INTO t VALUES (1)")
                c.onCommit { seen.withLock { $0.append(1) } }
                throw Abort()
            }
        }
        try db.transaction { c in c.onCommit { seen.withLock { $0.append(2) } } }
        #expect(seen.withLock { $0 } == [2])
        #expect(try db.query("SELECT v FROM t").isEmpty)
    }
}
